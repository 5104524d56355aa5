/**
 * Renders an inspect snapshot as text for a terminal (colours only where they belong).
 */
import type { PrimitiveReport } from './decode.js';
import type { Snapshot } from './inspect.js';

type Paint = (text: string) => string;
export interface Palette {
  readonly bold: Paint;
  readonly dim: Paint;
  readonly red: Paint;
  readonly green: Paint;
  readonly yellow: Paint;
  readonly cyan: Paint;
}

/** Colour only for a terminal, and never under NO_COLOR (https://no-color.org); FORCE_COLOR wins. */
export function wantsColor(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv = process.env): boolean {
  if (env.NO_COLOR) return false;
  if (env.FORCE_COLOR !== undefined) return env.FORCE_COLOR !== '0';
  return stream.isTTY === true && env.TERM !== 'dumb';
}

export function palette(enabled: boolean): Palette {
  const wrap =
    (open: number, close: number): Paint =>
    (text) =>
      enabled ? `\x1b[${open}m${text}\x1b[${close}m` : text;
  return {
    bold: wrap(1, 22),
    dim: wrap(2, 22),
    red: wrap(31, 39),
    green: wrap(32, 39),
    yellow: wrap(33, 39),
    cyan: wrap(36, 39),
  };
}

/** A duration for people: "850 ms", "28.9 s", "12 min 5 s", "3 h 2 min". */
export function formatDuration(ms: number): string {
  if (ms < 1_000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1_000).toFixed(1)} s`;
  const seconds = Math.round(ms / 1_000);
  if (seconds < 3_600) return `${Math.floor(seconds / 60)} min ${seconds % 60} s`;
  return `${Math.floor(seconds / 3_600)} h ${Math.floor((seconds % 3_600) / 60)} min`;
}

function ttl(ms: number, c: Palette): string {
  if (ms === -1) return c.yellow('no expiry');
  if (ms < 0) return 'gone';
  return `ttl ${formatDuration(ms)}`;
}

function lapse(ms: number | null, c: Palette): string {
  if (ms === null) return 'no place entry';
  return ms >= 0 ? `place lapses in ${formatDuration(ms)}` : c.red(`place lapsed ${formatDuration(-ms)} ago`);
}

const plural = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`;

/** The lines of one primitive: a heading, then its holders and waiters indented. */
function renderPrimitive(report: PrimitiveReport, c: Palette, cluster: boolean): string[] {
  const head = (state: string): string =>
    `${c.cyan(report.kind)} ${c.bold(report.name)}  ${state}${cluster && report.node ? c.dim(`  on ${report.node}`) : ''}`;
  const listening = report.listening ? [c.dim(`  ${plural(report.listening, 'connection')} listening for it`)] : [];
  switch (report.kind) {
    case 'lock': {
      const held = report.holders.length > 0;
      const token = report.lastToken === null ? '' : `  last fencing token ${report.lastToken}`;
      const lines = [
        head(`${held ? c.yellow('held') : c.green('free')}${held ? `  ${ttl(report.ttl, c)}` : ''}${token}`),
      ];
      for (const h of report.holders)
        lines.push(`  owner ${h.owner}  holds ${h.holds}${report.token ? `  token ${report.token}` : ''}`);
      if (report.queue.length > 0) lines.push(`  ${plural(report.queue.length, 'waiter')} queued:`);
      for (const w of report.queue) {
        const waiting = w.waitingFor === null ? '' : `waiting ${formatDuration(w.waitingFor)}  `;
        lines.push(`    ${w.position}. ${w.owner}  ${waiting}${lapse(w.placeLapsesIn, c)}`);
      }
      return [...lines, ...listening];
    }
    case 'read-write-lock': {
      const state = report.writer
        ? c.yellow('write-locked')
        : c.yellow(`read by ${plural(report.readers.length, 'reader')}`);
      const lines = [head(state)];
      if (report.writer) {
        const w = report.writer;
        lines.push(`  writer ${w.owner}  holds ${w.holds}  ${ttl(w.ttl, c)}`);
      }
      for (const r of report.readers) {
        const end = r.leaseEndsIn === null ? '' : `  lease ends in ${formatDuration(r.leaseEndsIn)}`;
        lines.push(`  reader ${r.owner}  holds ${r.holds}${end}`);
      }
      return [...lines, ...listening];
    }
    case 'semaphore': {
      const free = report.available === null ? 'permits not set' : `${plural(report.available, 'permit')} free`;
      const lines = [head(report.available === 0 ? c.yellow(free) : c.green(free))];
      if (report.waiters.length > 0) lines.push(`  ${plural(report.waiters.length, 'waiter')} queued:`);
      for (const w of report.waiters)
        lines.push(
          `    ${w.id}  wants ${w.permits}  waiting ${formatDuration(w.waitingFor)}  ${lapse(w.placeLapsesIn, c)}`,
        );
      return [...lines, ...listening];
    }
    case 'permit-expirable-semaphore': {
      const free =
        report.total === null
          ? `${plural(report.holders.length, 'permit')} out, total not set`
          : `${report.available} of ${report.total} permits free`;
      const lines = [head(report.available === 0 ? c.yellow(free) : c.green(free))];
      for (const h of report.holders)
        lines.push(
          `  permit ${h.permit}  ${h.leaseEndsIn === null ? 'held until released' : `lease ends in ${formatDuration(h.leaseEndsIn)}`}`,
        );
      return [...lines, ...listening];
    }
    case 'count-down-latch':
      return [head(`count ${report.count}${report.ttl >= 0 ? `  ${ttl(report.ttl, c)}` : ''}`), ...listening];
  }
}

/** The whole snapshot as text: a header line, then one block per primitive. */
export function renderSnapshot(snapshot: Snapshot, c: Palette): string {
  const time = snapshot.at.slice(11, 19);
  const header = c.dim(
    `${snapshot.address} (${snapshot.mode})  prefix "${snapshot.prefix}"  ` +
      `${plural(snapshot.primitives.length, 'primitive')} matching "${snapshot.pattern}"  at ${time}`,
  );
  const blocks = snapshot.primitives.map((report) =>
    renderPrimitive(report, c, snapshot.mode === 'cluster').join('\n'),
  );
  return `${header}\n${blocks.length ? `\n${blocks.join('\n\n')}\n` : ''}`;
}
