/**
 * The fault suite's table of figures and its legend.
 */
import type { Verdict } from './check/analyze.js';
import type { Figures } from './check/figures.js';
import { percentile } from './check/overlaps.js';

const HEADERS = [
  'scenario',
  'resource',
  'sections',
  'believed ov (max ms)',
  'accepted ov',
  'lost upd',
  'holders/permits',
  'errors (allowed)',
  'loss sig (false)',
  'lost holds sig/rel/silent',
  'detect p50/p99/max ms',
  'wrong',
  'max wait ms',
  'verdict',
];

const ms = (value: number | undefined): string => (value === undefined ? '-' : value.toFixed(0));

function cells(v: Verdict, f: Figures, first: boolean, wallMs: number | undefined): string[] {
  const d = f.detection;
  const lat = d.latencies;
  const verdict = v.control ? (v.pass ? 'CONTROL ok' : 'CONTROL FAIL') : v.pass ? 'PASS' : 'FAIL';
  return [
    first ? v.name : '',
    `${f.res} (${f.primitive})`,
    String(f.sections),
    `${f.believed} (${f.believedMaxMs.toFixed(1)})`,
    String(f.accepted),
    f.lostUpdates === undefined ? '-' : String(f.lostUpdates),
    `${f.maxConcurrent}/${f.permits ?? (f.primitive === 'read-write-lock' ? 'rw' : 1)}`,
    `${f.errors.length} (${f.allowedErrors})`,
    `${f.lossSignals} (${f.spurious.length})`,
    d.victims === 0 ? '-' : `${d.bySignal}/${d.atRelease}/${d.silent.length}`,
    lat.length === 0 ? '-' : `${ms(percentile(lat, 50))}/${ms(percentile(lat, 99))}/${ms(Math.max(...lat))}`,
    String(f.wrong.length),
    f.maxWaitMs.toFixed(0),
    first ? `${verdict}${wallMs === undefined ? '' : ` ${(wallMs / 1000).toFixed(1)}s`}` : '',
  ];
}

/** The per-scenario table, then the reasons of each failure. */
export function renderTable(rows: readonly { verdict: Verdict; wallMs?: number; historyPath?: string }[]): string {
  const body = rows.flatMap(({ verdict, wallMs }) => verdict.figures.map((f, i) => cells(verdict, f, i === 0, wallMs)));
  const widths = HEADERS.map((h, i) => Math.max(h.length, ...body.map((r) => (r[i] ?? '').length)));
  const line = (r: readonly string[]): string =>
    r
      .map((c, i) => c.padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd();
  const out = [line(HEADERS), widths.map((w) => '-'.repeat(w)).join('  ')];
  for (const r of body) out.push(line(r));
  const failures = rows.filter(({ verdict }) => !verdict.pass);
  if (failures.length > 0) out.push('', 'Why:');
  for (const { verdict, historyPath } of failures) {
    out.push(`  ${verdict.name}${verdict.control ? ' (control)' : ''}: ${verdict.title}`);
    for (const reason of verdict.reasons) out.push(`    - ${reason}`);
    if (historyPath) out.push(`    history: ${historyPath}`);
  }
  return out.join('\n');
}

/** The legend printed under the table. */
export const LEGEND = `
sections: critical sections entered. believed ov: pairs of sections that overlapped in time though
they may not (semaphore: entries beyond the permits), with the longest overlap. accepted ov: such
pairs in which both sections acted on the fenced register (both writes accepted). lost upd: accepted
increments missing from the read-sleep-write counter. loss sig (false): lease signals that aborted,
and how many fired with no fault able to take the lock or while Redis still listed the owner. lost
holds: holds a fault took away, learned by the lease signal / by a rejected release / never.
detect: from the moment the lock was lost (key deleted, holder resumed) to the lease signal.
wrong: results the operations rule out (hold counts, permits, locks left held, refused releases).
max wait: the longest a task waited for its primitive (a wait still open when the run stopped
counts until then).`.trim();
