/**
 * What one run measured (the JSON file's shape) and how it prints: a Markdown table per scenario,
 * then every target checked against the bars of today.
 */
import { fixed, int, ms, table } from './markdown.js';
import { multiThroughputTable, redisCostTable, scaleTables } from './report-cost.js';
import type { ContentionResult, NotificationFloor } from './scenarios/contention.js';
import type { DetectionRun, WaiterWakeRow } from './scenarios/detection.js';
import type { LatencyResult } from './scenarios/multi.js';
import type { ThroughputResult } from './scenarios/single.js';
import type { WatchdogResult } from './scenarios/watchdog.js';
import type { RedisCostRow } from './scenarios/redis-cost.js';
import type { HeldRow } from './scenarios/scale.js';
import type { WaitersRow } from './scenarios/waiters.js';
import { checkTargets, type TargetCheck } from './targets.js';

/** Everything one run measured: the JSON file's shape. */
export interface BenchResults {
  date: string;
  quick: boolean;
  machine: { cpus: number; cpu: string; node: string; redis: string };
  durationSec: number;
  single: ThroughputResult[];
  concurrent: ThroughputResult[];
  contention: ContentionResult[];
  /**
   * Measured beside scenario 3, once per hold: what any hand-over between two processes costs at
   * the least after the listener sat idle that long. (Runs before 2026-11-24 have one, spaced 2 ms.)
   */
  notificationFloors?: NotificationFloor[];
  /** Every target, checked (see targets.ts). */
  targets?: TargetCheck[];
  watchdog: WatchdogResult[];
  multi: LatencyResult[];
  /** Scenario 6 (runs before 2026-11-25 have none). */
  detection?: DetectionRun[];
  /** Scenario 6, beside the faults (runs before 2026-11-26 have none). */
  waiterWake?: WaiterWakeRow;
  /** Scenario 5's pairs/s over 3 and 5 servers (earlier runs have none). */
  multiThroughput?: ThroughputResult[];
  /** Scenario 7: what a pair costs Redis (earlier runs have none). */
  redisCost?: RedisCostRow[];
  /** Scenario 8: locks held at scale, and waiters queued at scale (earlier runs have none). */
  held?: HeldRow[];
  waiters?: WaitersRow[];
  /** Parts of latchkey this checkout does not have yet, so they were not measured. */
  missing: string[];
}

/** The results as Markdown tables (what the README's Performance section shows). */
export function renderTable(results: BenchResults): string {
  const { machine } = results;
  const parts = [
    `latchkey bench, ${results.date.slice(0, 10)}${results.quick ? ' (--quick)' : ''}: ${machine.cpus} cores (${machine.cpu}), Node ${machine.node}, Redis ${machine.redis}, ${results.durationSec} s`,
    '',
    '1. One client, acquire + release in a loop (floor: two bare EVALSHA round trips)',
    '',
    table(
      ['library', 'pairs/s', 'of floor'],
      results.single.map((row) => [row.library, int(row.pairsPerSec), fixed(row.ofFloor ?? Number.NaN, 2)]),
    ),
    '',
    `2. ${results.concurrent.length > 0 ? 'Concurrent tasks, one key each' : ''}`,
    '',
    table(
      ['library', 'pairs/s'],
      results.concurrent.map((row) => [row.library, int(row.pairsPerSec)]),
    ),
    '',
    '3. Worker processes contending for one key (times in ms)',
    '',
    table(
      [
        'library',
        'W',
        'hold',
        'acq/s',
        'util',
        'wait p50',
        'wait p99',
        'wait max',
        'gap p50',
        'gap p99',
        'Jain',
        'overlaps',
        'gave up',
      ],
      results.contention.map((row) => [
        row.library,
        String(row.workers),
        String(row.holdMs),
        int(row.acquisitionsPerSec),
        fixed(row.utilisation, 2),
        ms(row.waitP50),
        ms(row.waitP99),
        ms(row.waitMax),
        ms(row.gapP50),
        ms(row.gapP99),
        fixed(row.jain, 3),
        String(row.overlaps),
        String(row.failures + row.unanswered),
      ]),
    ),
    '',
    handOverTable(results.contention),
    '',
    (results.notificationFloors ?? [])
      .map(
        (floor) =>
          `Notification floor after ${floor.spacingMs} ms idle (SPUBLISH to another process, same run): ` +
          `p50 ${ms(floor.p50)} ms, mean ${ms(floor.mean)} ms, p99 ${ms(floor.p99)} ms.`,
      )
      .join('\n'),
    '',
    '4. Watchdog cost: Redis commands per renewal period',
    '',
    table(
      [
        'library',
        'held locks',
        'period (ms)',
        'scripts sent/period',
        'budget (N/1,000 per node)',
        'plain commands beside them/period',
        'run inside scripts/period',
      ],
      results.watchdog.map((row) => [
        row.library,
        int(row.locks),
        int(row.periodMs),
        fixed(row.commandsPerPeriod, 1),
        int(row.budget),
        row.plainPerPeriod === undefined ? '–' : fixed(row.plainPerPeriod, 1),
        int(row.innerPerPeriod),
      ]),
    ),
    '',
    '5. Acquire latency over independent servers (ms)',
    '',
    table(
      ['library', 'servers', 'acquire p50', 'acquire p99'],
      results.multi.map((row) => [row.library, String(row.servers), ms(row.acquireP50), ms(row.acquireP99)]),
    ),
  ];
  if (results.multiThroughput && results.multiThroughput.length > 0)
    parts.push(
      '',
      '5. One client, acquire + release in a loop over independent servers (median of paired rounds)',
      '',
      multiThroughputTable(results),
    );
  if (results.detection && results.detection.length > 0)
    parts.push(
      '',
      '6. Lost-lock detection: fault to the lease signal aborting (ms)',
      '',
      detectionTable(results.detection, results.waiterWake),
    );
  if (results.redisCost && results.redisCost.length > 0)
    parts.push(
      '',
      '7. What a pair costs Redis, per acquire + release (time from INFO commandstats, CPU from INFO cpu)',
      '',
      redisCostTable(results),
    );
  const scale = scaleTables(results);
  if (scale.length > 0) parts.push('', ...scale);
  // Checked again, not read from the file: an earlier run's figures are shown against today's bars.
  const targets = checkTargets(results);
  if (targets.length > 0) parts.push('', 'Targets', '', renderTargets(targets));
  if (results.missing.length > 0)
    parts.push('', `Not measured (missing in this checkout): ${results.missing.join('; ')}`);
  return parts.join('\n');
}

/** The targets as a table; figures that are no target say "info" where the others say whether they met it. */
export function renderTargets(targets: readonly TargetCheck[]): string {
  return table(
    ['scenario', 'subject', 'target', 'measured', 'met', 'context (same run)'],
    targets.map((check) => [
      String(check.scenario),
      check.subject,
      check.target,
      check.measured,
      check.info ? 'info' : check.met ? 'yes' : 'no',
      check.bound ?? '',
    ]),
    6,
  );
}

/**
 * latchkey's hand-overs in scenario 3: Redis counts the hand-over messages it published, the
 * workers how each acquisition came. A hand-over whose message came too late to prove the lease
 * is confirmed by an attempt's round trip instead: the messages not taken by message alone.
 */
export function handOverTable(rows: readonly ContentionResult[]): string {
  const counted = rows.filter((row) => row.handOvers);
  if (counted.length === 0) return '';
  return [
    'Hand-overs of the latchkey rows (whole run, warm-up to cut): by message alone, or confirmed by a round trip',
    '',
    table(
      ['library', 'W', 'hold', 'hand-overs', 'by message', 'by reply after a wait', 'free at once', 'round trip share'],
      counted.map((row) => {
        const { messages, byMessage, byReply, free } = row.handOvers!;
        return [
          row.library,
          String(row.workers),
          String(row.holdMs),
          int(messages),
          int(byMessage),
          int(byReply),
          int(free),
          roundTripShare(row) === undefined ? '–' : `${(100 * roundTripShare(row)!).toFixed(2)}%`,
        ];
      }),
    ),
  ].join('\n');
}

/** The share of hand-overs that had to confirm with a round trip (undefined without hand-overs). */
export function roundTripShare(row: ContentionResult): number | undefined {
  if (!row.handOvers || row.handOvers.messages === 0) return undefined;
  const { messages, byMessage } = row.handOvers;
  return Math.max(0, messages - byMessage) / messages;
}

/** Scenario 6 as one table: a row per client configuration and fault. */
export function detectionTable(runs: readonly DetectionRun[], waiterWake?: WaiterWakeRow): string {
  return [
    table(
      ['library', 'detection', 'watchdogTimeout', 'fault', 'locks', 'detected', 'p50', 'p99', 'max'],
      runs.flatMap((run) =>
        run.rows.map((row) => [
          run.library,
          run.detection,
          int(run.watchdogTimeout),
          row.fault,
          int(row.locks),
          int(row.detected),
          ms(row.p50),
          ms(row.p99),
          ms(row.max),
        ]),
      ),
      4,
    ),
    '',
    runs
      .map(
        (run) =>
          `Detection ${run.detection}: ` +
          (run.takenOver === undefined ? '' : `the other client got ${run.takenOver} of the locks it took over; `) +
          (run.rows.some((row) => row.survived)
            ? `${run.rows.reduce((sum, row) => sum + (row.survived ?? 0), 0)} expiring locks were renewed before they expired (not lost, not counted); `
            : '') +
          `${run.falseAlarms} of ${run.controls} untouched locks held alongside lost their signal (false alarms).`,
      )
      .join('\n'),
    ...(waiterWake
      ? [
          '',
          `A waiter queued behind a holder that stopped renewing, from the key's expiry to its lock() resolving ` +
            `(its own timer, set from the TTL it read): p50 ${ms(waiterWake.p50)}, p99 ${ms(waiterWake.p99)}, ` +
            `max ${ms(waiterWake.max)} ms over ${waiterWake.acquired} of ${waiterWake.trials} trials. ` +
            `Compare the expiry row: when Redis' expiry notification reaches a client tracking the key.`,
        ]
      : []),
  ].join('\n');
}
