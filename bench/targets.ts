/**
 * The benchmark targets, checked against one run. Every bar is relative to
 * something measured in the same run (a floor, a peer, the hand-over ring), because this shared
 * machine's speed drifts too much for absolute figures to mean anything from one run to the next.
 * bench/README.md gives the reasoning behind each bar.
 */
import { FLOOR_LOCK_SCRIPTS, FLOOR_TWO_SCRIPTS, floorOnServers, HAND_OVER_RING, isFloor } from './names.js';
import type { BenchResults } from './report.js';
import { redisCostChecks, scaleChecks } from './targets-cost.js';
import type { ContentionResult } from './scenarios/contention.js';
import type { ThroughputResult } from './scenarios/single.js';
import { median, medianInterval, roundRatios } from './stats.js';

/** One target, measured; or, with `info`, a figure reported beside the targets that is none. */
export interface TargetCheck {
  readonly scenario: number;
  /** Which library and configuration. */
  readonly subject: string;
  /** The bar, in words. */
  readonly target: string;
  readonly measured: string;
  readonly met: boolean;
  /** Context for the figure: what bounds it on this machine. */
  readonly bound?: string;
  /** Not a target: reported for information, never counted as met or missed. */
  readonly info?: true;
}

/** Scenario 1: at least this share of redis-semaphore's pairs/s, round by round (parity within noise). */
export const PEER_PARITY = 0.97;
/** Scenario 1's rows held to parity: the locks taken with a lease, and Lock with the watchdog. */
export const PARITY_ROWS: readonly string[] = [
  'latchkey Lock',
  'latchkey Lock (lease)',
  'latchkey FairLock (lease)',
  'latchkey FencedLock (lease)',
];
/** Scenario 2: at least this many times the best peer's pairs/s. */
export const PEER_FACTOR = 1.8;
/** Scenario 3: Jain's fairness index at least this. */
export const FAIRNESS = 0.99;
/** Scenario 3: wait max at least this many times lower than the best peer's. */
export const WAIT_MAX_FACTOR = 10;
/** Scenario 3: utilisation at least this share of the hand-over ring's. */
export const RING_SHARE = 0.95;
/** Scenario 3: utilisation at least this share of the best barging peer's. */
export const BARGING_SHARE = 0.9;
/** The peers whose releasing process may take the lock again ahead of those waiting. */
export const BARGING_PEERS: readonly string[] = ['redlock', 'redis-semaphore'];
/** Scenario 4: at most one renewal call per this many held locks per Redis node per period. */
export const LOCKS_PER_CALL = 1_000;
/** Scenario 5: acquire p50 at most this many times a bare fan-out's to the same servers. */
export const FAN_OUT_FACTOR = 1.1;
/** Scenario 5: pairs/s at least this share of redlock's over the same five servers, round by round. */
export const REDLOCK_SHARE = 1;
/** Scenario 6: p99 from deletion or takeover to the signal aborting, at most this (ms). */
export const DETECTION_P99_MS = 10;

const isOurs = (library: string): boolean => library.startsWith('latchkey');
const isPeer = (library: string): boolean => !isOurs(library) && !isFloor(library);
const num = (value: number, digits = 2): string => (Number.isFinite(value) ? value.toFixed(digits) : '–');

/** `a` over `b`: the median of the rounds' ratios (drift cancels out) with its 95% interval. */
export function compare(a: ThroughputResult, b: ThroughputResult): { ratio: number; text: string } {
  const ratios = a.rounds && b.rounds ? roundRatios(a.rounds, b.rounds) : undefined;
  if (!ratios) {
    const ratio = a.pairsPerSec / b.pairsPerSec;
    return { ratio, text: `${num(ratio)}x` };
  }
  const [low, high] = medianInterval(ratios);
  const ratio = median(ratios);
  return { ratio, text: `${num(ratio)}x (95% interval ${num(low)}-${num(high)}, ${ratios.length} rounds)` };
}

/** The peer that did best against `row`, round by round, and how `row` compared with it. */
function bestPeer(
  row: ThroughputResult,
  rows: readonly ThroughputResult[],
): { peer: ThroughputResult; against: { ratio: number; text: string } } | undefined {
  const peers = rows.filter((r) => isPeer(r.library));
  if (peers.length === 0) return undefined;
  return peers
    .map((peer) => ({ peer, against: compare(row, peer) }))
    .reduce((a, b) => (b.against.ratio < a.against.ratio ? b : a));
}

function singleClientChecks(rows: readonly ThroughputResult[]): TargetCheck[] {
  const floor = rows.find((row) => row.library === FLOOR_TWO_SCRIPTS);
  const bare = rows.find((row) => row.library === FLOOR_LOCK_SCRIPTS);
  const semaphore = rows.find((row) => row.library === 'redis-semaphore');
  const checks: TargetCheck[] = [];
  for (const row of rows.filter((r) => isOurs(r.library))) {
    // The floors are context: what two bare scripts reach, and latchkey's own two sent bare (the
    // part of a miss that no client-side change can win back).
    const context = floor
      ? [
          `of the floor: ${compare(row, floor).text}`,
          ...(bare ? [`its lock scripts sent bare: ${num(compare(bare, floor).ratio)}`] : []),
          ...(semaphore ? [`redis-semaphore: ${num(compare(semaphore, floor).ratio)}`] : []),
        ]
      : [];
    const bound = context.length > 0 ? { bound: context.join('; ') } : {};
    const targeted = PARITY_ROWS.includes(row.library);
    if (semaphore) {
      const against = compare(row, semaphore);
      checks.push({
        scenario: 1,
        subject: row.library,
        target: `pairs/s >= ${PEER_PARITY}x redis-semaphore's`,
        measured: against.text,
        met: against.ratio >= PEER_PARITY,
        ...bound,
        ...(targeted ? {} : { info: true as const }),
      });
    }
    const best = bestPeer(row, rows);
    if (best && best.peer !== semaphore)
      checks.push({
        scenario: 1,
        subject: row.library,
        target: `ratio to the best peer (${best.peer.library})`,
        measured: best.against.text,
        met: true,
        info: true,
      });
  }
  return checks;
}

function concurrentChecks(rows: readonly ThroughputResult[]): TargetCheck[] {
  const checks: TargetCheck[] = [];
  for (const row of rows.filter((r) => isOurs(r.library))) {
    const best = bestPeer(row, rows);
    if (!best) continue;
    checks.push({
      scenario: 2,
      subject: row.library,
      target: `pairs/s >= ${PEER_FACTOR}x the best peer's (${best.peer.library})`,
      measured: best.against.text,
      met: best.against.ratio >= PEER_FACTOR,
    });
  }
  return checks;
}

/** The hand-over ring's runs in one configuration (before and after the libraries). */
function ringRuns(results: BenchResults, workers: number, holdMs: number): ContentionResult[] {
  return results.contention.filter((r) => r.library === HAND_OVER_RING && r.workers === workers && r.holdMs === holdMs);
}

function contentionChecks(results: BenchResults, row: ContentionResult): TargetCheck[] {
  const subject = `${row.library} W=${row.workers} hold ${row.holdMs} ms`;
  const checks: TargetCheck[] = [];
  checks.push({
    scenario: 3,
    subject,
    target: `Jain's index >= ${FAIRNESS}`,
    measured: num(row.jain, 3),
    met: row.jain >= FAIRNESS,
  });
  const peers = results.contention.filter(
    (r) => isPeer(r.library) && r.workers === row.workers && r.holdMs === row.holdMs,
  );
  const ring = ringRuns(results, row.workers, row.holdMs);
  if (peers.length > 0) {
    const best = peers.reduce((a, b) => (b.waitMax < a.waitMax ? b : a));
    const bar = best.waitMax / WAIT_MAX_FACTOR;
    checks.push({
      scenario: 3,
      subject,
      target: `wait max <= best peer's / ${WAIT_MAX_FACTOR} (${best.library}: ${num(best.waitMax, 0)} / ${WAIT_MAX_FACTOR} = ${num(bar, 1)} ms)`,
      measured: `${num(row.waitMax, 1)} ms`,
      met: row.waitMax <= bar,
      // Without barging every wait spans the other W-1 turns: the ring's is the least such a wait can be.
      ...(ring.length > 0
        ? { bound: `the hand-over ring's wait max: ${ring.map((r) => num(r.waitMax, 1)).join(' and ')} ms` }
        : {}),
    });
  }
  if (ring.length > 0) {
    // The ring ran before and after the libraries: their mean stands for the machine in between.
    const reference = ring.reduce((sum, r) => sum + r.utilisation, 0) / ring.length;
    checks.push({
      scenario: 3,
      subject,
      target: `utilisation >= ${RING_SHARE} of the hand-over ring's (${num(reference, 3)}, mean of ${ring.length} runs)`,
      measured: `${num(row.utilisation, 3)}: ${num(row.utilisation / reference, 3)} of the ring`,
      met: row.utilisation >= RING_SHARE * reference,
      bound: `the ring's runs: ${ring.map((r) => num(r.utilisation, 3)).join(' and ')}`,
    });
  }
  const barging = peers.filter((r) => BARGING_PEERS.includes(r.library));
  if (barging.length > 0) {
    const best = barging.reduce((a, b) => (b.utilisation > a.utilisation ? b : a));
    checks.push({
      scenario: 3,
      subject,
      target: `utilisation >= ${BARGING_SHARE}x the best barging peer's (${best.library}: ${num(best.utilisation, 3)})`,
      measured: `${num(row.utilisation, 3)}: ${num(row.utilisation / best.utilisation, 3)}x`,
      met: row.utilisation >= BARGING_SHARE * best.utilisation,
    });
  }
  checks.push({ scenario: 3, subject, target: '0 overlaps', measured: String(row.overlaps), met: row.overlaps === 0 });
  return checks;
}

function multiServerChecks(results: BenchResults): TargetCheck[] {
  const checks: TargetCheck[] = [];
  const plain = results.multi.find((row) => row.library === 'latchkey Lock');
  const fanOut = (servers: number) => results.multi.find((row) => row.library === floorOnServers(servers));
  for (const row of results.multi.filter((r) => isOurs(r.library) && r.servers > 1)) {
    const bare = fanOut(row.servers);
    if (!bare) continue;
    const one = fanOut(1);
    const redlock = results.multi.find((r) => r.library === 'redlock' && r.servers === row.servers);
    const context = [
      plain && one ? `one Lock took ${num(plain.acquireP50 / one.acquireP50)}x a bare script on one server` : '',
      redlock ? `redlock took ${num(redlock.acquireP50 / bare.acquireP50)}x the fan-out` : '',
    ].filter(Boolean);
    checks.push({
      scenario: 5,
      subject: `${row.library} (${row.servers} servers)`,
      target: `acquire p50 <= ${FAN_OUT_FACTOR}x a bare script sent to the same servers at once (${num(bare.acquireP50)} ms)`,
      measured: `${num(row.acquireP50)} ms (${num(row.acquireP50 / bare.acquireP50)}x)`,
      met: row.acquireP50 <= FAN_OUT_FACTOR * bare.acquireP50,
      ...(context.length > 0 ? { bound: context.join('; ') } : {}),
    });
  }
  const pairs = results.multiThroughput ?? [];
  const redlock = pairs.find((r) => r.library === 'redlock');
  for (const row of redlock ? pairs.filter((r) => isOurs(r.library)) : []) {
    const against = compare(row, redlock!);
    const floor = pairs.find((r) => r.library === floorOnServers(row.servers ?? 0));
    checks.push({
      scenario: 5,
      subject: `${row.library} (${row.servers} servers)`,
      target: `pairs/s >= ${REDLOCK_SHARE}x redlock's over ${redlock!.servers} servers`,
      measured: against.text,
      met: against.ratio >= REDLOCK_SHARE,
      ...(floor
        ? { bound: `of a bare script sent to the same servers at once: ${num(compare(row, floor).ratio)}` }
        : {}),
    });
  }
  return checks;
}

function detectionChecks(results: BenchResults): TargetCheck[] {
  const checks: TargetCheck[] = [];
  for (const run of results.detection ?? []) {
    const subject = `${run.library}, detection ${run.detection}, watchdogTimeout ${run.watchdogTimeout} ms`;
    for (const row of run.rows) {
      const measured = `p99 ${num(row.p99, 1)} ms (p50 ${num(row.p50, 1)}, max ${num(row.max, 1)}; ${row.detected} of ${row.locks} detected)`;
      const targeted = run.detection === 'default' && row.fault !== 'expiry';
      checks.push({
        scenario: 6,
        subject: `${subject}: ${row.fault}`,
        target: targeted ? `p99 <= ${DETECTION_P99_MS} ms, every loss detected` : `${row.fault} to abort`,
        measured,
        met: !targeted || (row.p99 <= DETECTION_P99_MS && row.detected === row.locks),
        ...(targeted ? {} : { info: true as const }),
      });
    }
    checks.push({
      scenario: 6,
      subject,
      target: '0 false alarms (untouched locks whose signal aborted)',
      measured: `${run.falseAlarms} of ${run.controls}`,
      met: run.falseAlarms === 0,
    });
  }
  return checks;
}

/** Every target this run measured, with the figures reported beside them. */
export function checkTargets(results: BenchResults): TargetCheck[] {
  const checks = [...singleClientChecks(results.single), ...concurrentChecks(results.concurrent)];
  for (const row of results.contention.filter((r) => isOurs(r.library))) checks.push(...contentionChecks(results, row));
  for (const row of results.watchdog.filter((r) => isOurs(r.library)))
    checks.push({
      scenario: 4,
      subject: `${row.library}, ${row.locks.toLocaleString('en-US')} held, ${row.nodes ? `${row.nodes.length} primaries` : 'one Redis node'}`,
      target: `scripts (round trips) per period <= 1 per ${LOCKS_PER_CALL.toLocaleString('en-US')} locks per node (${row.budget})`,
      measured: num(row.commandsPerPeriod, 1),
      met: row.commandsPerPeriod <= row.budget,
    });
  checks.push(...multiServerChecks(results), ...detectionChecks(results));
  checks.push(...redisCostChecks(results), ...scaleChecks(results));
  return checks;
}
