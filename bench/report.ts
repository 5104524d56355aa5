import type { ContentionResult, NotificationFloor } from './scenarios/contention.js';
import type { LatencyResult } from './scenarios/multi.js';
import type { ThroughputResult } from './scenarios/single.js';
import type { WatchdogResult } from './scenarios/watchdog.js';

/** Everything one run measured: the JSON file's shape. */
export interface BenchResults {
  date: string;
  quick: boolean;
  machine: { cpus: number; cpu: string; node: string; redis: string };
  durationSec: number;
  single: ThroughputResult[];
  concurrent: ThroughputResult[];
  contention: ContentionResult[];
  /** Measured beside scenario 3: what any hand-over between two processes costs at the least. */
  notificationFloor: NotificationFloor | undefined;
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

function table(header: string[], rows: string[][]): string {
  const line = (cells: string[]): string => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map((_, i) => (i === 0 ? '---' : '---:'))), ...rows.map(line)].join('\n');
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
    results.notificationFloor
      ? `Notification floor (PUBLISH to another process, same run): p50 ${ms(results.notificationFloor.p50)} ms, p99 ${ms(results.notificationFloor.p99)} ms.`
      : '',
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
  if (results.missing.length > 0)
    parts.push('', `Not measured (missing in this checkout): ${results.missing.join('; ')}`);
  return parts.join('\n');
}
