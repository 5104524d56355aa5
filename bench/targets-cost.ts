/**
 * The checks of scenarios 7 and 8. Scenario 7's bar is relative, like every other: latchkey's
 * uncontended Lock pair spends at most redlock's script time in Redis, measured in the same run.
 * Scenario 8 has no bar of speed; it checks what must not grow: renewal calls within the watchdog's
 * budget at every size, and the cost per lock or per waiter no higher at the larger size than at
 * the smaller one (within a tolerance for noise).
 */
import type { BenchResults } from './report.js';
import { FLOOR_TWO_SCRIPTS } from './names.js';
import type { RedisCostRow } from './scenarios/redis-cost.js';
import type { HeldRow } from './scenarios/scale.js';
import type { WaitersRow } from './scenarios/waiters.js';
import type { TargetCheck } from './targets.js';

/** Scenario 8: memory per lock (or waiter) at the larger size at most this many times its value at the smaller. */
export const MEMORY_GROWTH = 1.25;
/** Scenario 8: Redis time per lock (or per hand-over), the same: looser, as time is noisier than memory. */
export const TIME_GROWTH = 1.5;
/** Scenario 8: Redis commands per hand-over, the same. */
export const CALLS_GROWTH = 1.25;

const num = (value: number, digits = 2): string => (Number.isFinite(value) ? value.toFixed(digits) : '–');
const int = (value: number): string => (Number.isFinite(value) ? Math.round(value).toLocaleString('en-US') : '–');
const us = (row: RedisCostRow): string =>
  `${num(row.scriptUs, 1)} µs in scripts${row.plain > 0 ? ` + ${num(row.plainUs, 1)} µs plain` : ''}`;

export function redisCostChecks(results: BenchResults): TargetCheck[] {
  const rows = results.redisCost ?? [];
  const find = (library: string, contended: boolean): RedisCostRow | undefined =>
    rows.find((row) => row.library === library && row.clients > 1 === contended);
  const checks: TargetCheck[] = [];
  const lock = find('latchkey Lock', false);
  const redlock = find('redlock', false);
  if (lock && redlock) {
    const floor = find(FLOOR_TWO_SCRIPTS, false);
    const semaphore = find('redis-semaphore', false);
    const context = [
      floor ? `two bare scripts: ${us(floor)}` : '',
      semaphore ? `redis-semaphore: ${us(semaphore)}` : '',
    ];
    checks.push({
      scenario: 7,
      subject: 'latchkey Lock, uncontended',
      target: `Redis time inside scripts per pair <= redlock's (${num(redlock.scriptUs, 1)} µs)`,
      measured: `${us(lock)} (${num(lock.scriptUs / redlock.scriptUs)}x)`,
      met: lock.scriptUs <= redlock.scriptUs,
      ...(context.some(Boolean) ? { bound: context.filter(Boolean).join('; ') } : {}),
    });
  }
  // Beside the target: Redis CPU per pair, and the contended pair, against the same peers.
  for (const contended of [false, true]) {
    const ours = find('latchkey Lock', contended);
    const peers = ['redlock', 'redis-semaphore'].map((library) => find(library, contended)).filter((row) => row);
    if (!ours || peers.length === 0) continue;
    const label = contended ? `contended (${ours.clients} clients)` : 'uncontended';
    checks.push({
      scenario: 7,
      subject: `latchkey Lock, ${label}`,
      target: 'Redis CPU per pair, against the peers',
      measured: `${num(ours.cpuUs, 1)} µs (${us(ours)})`,
      met: true,
      info: true,
      bound: peers.map((row) => `${row!.library}: ${num(row!.cpuUs, 1)} µs (${us(row!)})`).join('; '),
    });
  }
  return checks;
}

/** `value` at the largest size against the smallest: a check that it did not grow past `tolerance`. */
function notGrowing<T extends { library: string }>(
  rows: readonly T[],
  size: (row: T) => number,
  subject: string,
  what: string,
  value: (row: T) => number,
  tolerance: number,
  format: (value: number) => string,
): TargetCheck | undefined {
  if (rows.length < 2) return undefined;
  const sorted = [...rows].sort((a, b) => size(a) - size(b));
  const [small, large] = [sorted[0]!, sorted[sorted.length - 1]!];
  const ratio = value(large) / value(small);
  return {
    scenario: 8,
    subject,
    target: `${what} at ${int(size(large))} <= ${tolerance}x its value at ${int(size(small))}`,
    measured: `${format(value(large))} against ${format(value(small))} (${num(ratio)}x)`,
    met: value(large) <= tolerance * value(small),
  };
}

function heldChecks(rows: readonly HeldRow[]): TargetCheck[] {
  const checks: (TargetCheck | undefined)[] = [];
  const ours = rows.filter((row) => row.library.startsWith('latchkey'));
  for (const row of ours.filter((r) => r.renews))
    checks.push({
      scenario: 8,
      subject: `${row.library}, ${int(row.locks)} held`,
      target: `renewal calls per period <= 1 per 1,000 locks (${int(row.budget)})`,
      measured: num(row.renewalScripts, 1),
      met: row.renewalScripts <= row.budget,
    });
  for (const library of [...new Set(ours.map((row) => row.library))]) {
    const sizes = ours.filter((row) => row.library === library);
    const locks = (row: HeldRow): number => row.locks;
    const bytes = (value: number): string => `${int(value)} B`;
    checks.push(
      notGrowing(sizes, locks, library, 'client heap per held lock', (r) => r.clientBytes, MEMORY_GROWTH, bytes),
      notGrowing(sizes, locks, library, 'Redis memory per held lock', (r) => r.redisBytes, MEMORY_GROWTH, bytes),
    );
    if (sizes.every((row) => row.renews))
      checks.push(
        notGrowing(
          sizes,
          locks,
          library,
          'Redis time per held lock per renewal period',
          (r) => r.renewalUs / r.locks,
          TIME_GROWTH,
          (value) => `${num(value, 3)} µs`,
        ),
      );
  }
  return checks.filter((check): check is TargetCheck => check !== undefined);
}

function waiterChecks(rows: readonly WaitersRow[]): TargetCheck[] {
  const checks: (TargetCheck | undefined)[] = [];
  for (const row of rows)
    checks.push({
      scenario: 8,
      subject: `${row.library}, ${int(row.waiters)} waiters on ${row.locks} lock${row.locks > 1 ? 's' : ''}`,
      target: 'every waiter drained',
      measured:
        `${int(row.drained)} in ${int(row.drainMs)} ms (${int(row.handOversPerSec)} hand-overs/s` +
        (row.capped ? `; all would take ${int(row.waiters / row.handOversPerSec)} s at that rate)` : ')'),
      met: !row.capped,
      // The peers' waiters poll: how far they get within the cap is information, no target.
      ...(row.library.startsWith('latchkey') ? {} : { info: true as const }),
    });
  const ours = rows.filter((row) => row.library.startsWith('latchkey'));
  for (const locks of [...new Set(ours.map((row) => row.locks))]) {
    const sizes = ours.filter((row) => row.locks === locks);
    const subject = `${sizes[0]!.library}, waiters on ${locks} lock${locks > 1 ? 's' : ''}`;
    const waiters = (row: WaitersRow): number => row.waiters;
    const bytes = (value: number): string => `${int(value)} B`;
    checks.push(
      notGrowing(sizes, waiters, subject, 'client heap per waiter', (r) => r.clientBytes, MEMORY_GROWTH, bytes),
      notGrowing(sizes, waiters, subject, 'Redis memory per waiter', (r) => r.redisBytes, MEMORY_GROWTH, bytes),
      notGrowing(
        sizes,
        waiters,
        subject,
        'Redis commands per hand-over',
        (r) => r.scripts + r.plain,
        CALLS_GROWTH,
        num,
      ),
      notGrowing(
        sizes,
        waiters,
        subject,
        'Redis time per hand-over',
        (r) => r.redisUs,
        TIME_GROWTH,
        (v) => `${num(v, 1)} µs`,
      ),
    );
  }
  return checks.filter((check): check is TargetCheck => check !== undefined);
}

export function scaleChecks(results: BenchResults): TargetCheck[] {
  return [...heldChecks(results.held ?? []), ...waiterChecks(results.waiters ?? [])];
}
