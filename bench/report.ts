import type { ContentionResult, NotificationFloor } from './scenarios/contention.js';
import type { LatencyResult } from './scenarios/multi.js';
import type { ThroughputResult } from './scenarios/single.js';
import type { WatchdogResult } from './scenarios/watchdog.js';
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
  /** Every target of the issue, checked (see targets.ts). */
  targets?: TargetCheck[];
  watchdog: WatchdogResult[];
  multi: LatencyResult[];
  /** Parts of latchkey this checkout does not have yet, so they were not measured. */
  missing: string[];
}

const int = (value: number): string => (Number.isFinite(value) ? Math.round(value).toLocaleString('en-US') : '–');
const ms = (value: number): string =>
  !Number.isFinite(value)
    ? '–'
    : value >= 100
      ? Math.round(value).toLocaleString('en-US')
      : value.toFixed(value >= 10 ? 1 : 2);
const fixed = (value: number, digits: number): string => (Number.isFinite(value) ? value.toFixed(digits) : '–');

/** A Markdown table; the first `textColumns` columns are left-aligned, the rest (numbers) right-aligned. */
function table(header: string[], rows: string[][], textColumns = 1): string {
  const line = (cells: string[]): string => `| ${cells.join(' | ')} |`;
  const rule = header.map((_, i) => (i < textColumns ? '---' : '---:'));
  return [line(header), line(rule), ...rows.map(line)].join('\n');
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
    (results.notificationFloors ?? [])
      .map(
        (floor) =>
          `Notification floor after ${floor.spacingMs} ms idle (PUBLISH to another process, same run): ` +
          `p50 ${ms(floor.p50)} ms, mean ${ms(floor.mean)} ms, p99 ${ms(floor.p99)} ms.`,
      )
      .join('\n'),
    '',
    '4. Watchdog cost: Redis commands per renewal period',
    '',
    table(
      ['library', 'held locks', 'period (ms)', 'commands sent/period', 'budget (N/50)', 'run inside scripts/period'],
      results.watchdog.map((row) => [
        row.library,
        int(row.locks),
        int(row.periodMs),
        fixed(row.commandsPerPeriod, 1),
        int(row.budget),
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
  const targets = results.targets ?? checkTargets(results);
  if (targets.length > 0) parts.push('', 'Targets (issue 6)', '', renderTargets(targets));
  if (results.missing.length > 0)
    parts.push('', `Not measured (missing in this checkout): ${results.missing.join('; ')}`);
  return parts.join('\n');
}

/** The targets as a table; a miss carries the bound the machine sets, marked when it alone rules the target out. */
export function renderTargets(targets: readonly TargetCheck[]): string {
  return table(
    ['scenario', 'subject', 'target', 'measured', 'met', 'bound on this machine'],
    targets.map((check) => [
      String(check.scenario),
      check.subject,
      check.target,
      check.measured,
      check.met ? 'yes' : check.outOfReach ? 'no (out of reach)' : 'no',
      check.bound ?? '',
    ]),
    6,
  );
}
