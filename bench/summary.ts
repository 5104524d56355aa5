/** The tables the README's Performance section quotes from a run (`--render FILE.json --summary`). */
import { fixed, int, ms, table } from './markdown.js';
import { FLOOR_TWO_SCRIPTS, floorOnServers, HAND_OVER_RING, isFloor } from './names.js';
import { multiThroughputTable, redisCostTable, scaleTables } from './report-cost.js';
import { detectionTable, roundTripShare, type BenchResults } from './report.js';
import type { ContentionResult } from './scenarios/contention.js';
import type { ThroughputResult } from './scenarios/single.js';
import { compare } from './targets.js';

/**
 * The tables the README's Performance section shows (`--render FILE.json --summary`): the ratios
 * that the targets read, the key columns of scenario 3, and the hand-overs' round-trip share.
 */
export function renderSummary(results: BenchResults): string {
  const floor = results.single.find((row) => row.library === FLOOR_TWO_SCRIPTS);
  const semaphore = results.single.find((row) => row.library === 'redis-semaphore');
  const paired = (a: ThroughputResult, b: ThroughputResult | undefined): string =>
    b
      ? compare(a, b)
          .text.replace(/, \d+ rounds\)$/, ')')
          .replace('95% interval ', '')
      : '–';
  const bestPeer = (row: ThroughputResult, rows: readonly ThroughputResult[]): string => {
    const peers = rows.filter((r) => !r.library.startsWith('latchkey') && !isFloor(r.library));
    if (peers.length === 0 || !row.library.startsWith('latchkey')) return '';
    const [best] = peers.map((peer) => [peer, compare(row, peer).ratio] as const).sort((a, b) => a[1] - b[1]);
    return `${paired(row, best![0])} ${best![0].library}`;
  };
  const ring = (workers: number, holdMs: number) =>
    results.contention.filter((r) => r.library === HAND_OVER_RING && r.workers === workers && r.holdMs === holdMs);
  const configs = [...new Set(results.contention.map((row) => `${row.workers}|${row.holdMs}`))].map((config) =>
    config.split('|').map(Number),
  );
  const contentionRows = configs.flatMap(([workers, holdMs]) => {
    const rings = ring(workers!, holdMs!);
    const mean = (pick: (row: ContentionResult) => number): number =>
      rings.reduce((sum, r) => sum + pick(r), 0) / rings.length;
    const ringUtil = mean((r) => r.utilisation);
    const rows = results.contention.filter(
      (r) => r.workers === workers && r.holdMs === holdMs && r.library !== HAND_OVER_RING,
    );
    return [
      [
        `hand-over ring (mean of ${rings.length})`,
        String(workers),
        String(holdMs),
        fixed(ringUtil, 2),
        '1.00',
        ms(mean((r) => r.waitP99)),
        ms(mean((r) => r.waitMax)),
        ms(mean((r) => r.gapP50)),
        fixed(
          mean((r) => r.jain),
          3,
        ),
      ],
      ...rows.map((row) => [
        row.library,
        String(workers),
        String(holdMs),
        fixed(row.utilisation, 2),
        fixed(row.utilisation / ringUtil, 2),
        ms(row.waitP99),
        ms(row.waitMax),
        ms(row.gapP50),
        fixed(row.jain, 3),
      ]),
    ];
  });
  const counted = results.contention.filter((row) => row.handOvers);
  const handOvers = counted.reduce((sum, row) => sum + row.handOvers!.messages, 0);
  const confirmed = counted.reduce(
    (sum, row) => sum + Math.max(0, row.handOvers!.messages - row.handOvers!.byMessage),
    0,
  );
  const worst = Math.max(0, ...counted.map((row) => roundTripShare(row) ?? 0));
  const fanOut = (servers: number) => results.multi.find((row) => row.library === floorOnServers(servers));
  const parts = [
    '**1. One client, acquire + release in a loop** (median of 75 paired rounds, 95% interval)',
    '',
    table(
      ['library', 'pairs/s', 'of the floor', 'to redis-semaphore'],
      results.single.map((row) => [
        row.library,
        int(row.pairsPerSec),
        floor ? paired(row, floor) : '–',
        row === semaphore || isFloor(row.library) ? '' : paired(row, semaphore),
      ]),
    ),
    '',
    `**2. ${results.concurrent.length > 0 ? '64 concurrent tasks, one key each, one client' : ''}**`,
    '',
    table(
      ['library', 'pairs/s', 'to the best peer'],
      results.concurrent.map((row) => [row.library, int(row.pairsPerSec), bestPeer(row, results.concurrent)]),
    ),
    '',
    '**3. W worker processes contending for one key, holding it `hold` ms** (times in ms)',
    '',
    table(['library', 'W', 'hold', 'util', 'of the ring', 'wait p99', 'wait max', 'gap p50', 'Jain'], contentionRows),
    '',
    counted.length > 0
      ? `latchkey's hand-overs confirmed by a round trip (the message came too late to prove the lease): ` +
        `${int(confirmed)} of ${int(handOvers)} (${((100 * confirmed) / handOvers).toFixed(2)}%; ` +
        `at most ${(100 * worst).toFixed(2)}% in one row).`
      : '',
    '',
    '**4. Watchdog: Redis commands per renewal period**',
    '',
    table(
      ['library', 'held locks', 'period (ms)', 'scripts/period', 'plain commands beside them'],
      results.watchdog.map((row) => [
        row.library,
        int(row.locks),
        int(row.periodMs),
        ms(row.commandsPerPeriod),
        row.plainPerPeriod === undefined ? '–' : ms(row.plainPerPeriod),
      ]),
    ),
    '',
    '**5. Uncontended acquire over independent servers** (ms)',
    '',
    table(
      ['library', 'servers', 'acquire p50', 'acquire p99', 'of the bare fan-out (p50)'],
      results.multi.map((row) => {
        const bare = fanOut(row.servers);
        return [
          row.library,
          String(row.servers),
          ms(row.acquireP50),
          ms(row.acquireP99),
          bare && !isFloor(row.library) ? `${fixed(row.acquireP50 / bare.acquireP50, 2)}x` : '',
        ];
      }),
    ),
  ];
  if (results.multiThroughput && results.multiThroughput.length > 0)
    parts.push(
      '',
      '**5. Pairs/s over independent servers** (median of paired rounds)',
      '',
      multiThroughputTable(results),
    );
  if (results.detection && results.detection.length > 0)
    parts.push(
      '',
      '**6. Lost-lock detection: fault to the lease signal aborting** (ms)',
      '',
      detectionTable(results.detection, results.waiterWake),
    );
  if (results.redisCost && results.redisCost.length > 0)
    parts.push('', '**7. What a pair costs Redis** (per acquire + release)', '', redisCostTable(results));
  const scale = scaleTables(results);
  if (scale.length > 0) parts.push('', ...scale.map((line) => (line.startsWith('8. ') ? `**${line}**` : line)));
  return parts.join('\n');
}
