/**
 * Tests of the benchmark's target checks and report, on results made by hand.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compareRuns } from '../compare.js';
import { FLOOR_LOCK_SCRIPTS, FLOOR_TWO_SCRIPTS, floorOnServers, HAND_OVER_RING } from '../names.js';
import { handOverTable, renderSummary, renderTable, roundTripShare, type BenchResults } from '../report.js';
import type { ContentionResult } from '../scenarios/contention.js';
import type { DetectionRun } from '../scenarios/detection.js';
import { checkTargets, type TargetCheck } from '../targets.js';

function contention(library: string, fields: Partial<ContentionResult>): ContentionResult {
  return {
    library,
    workers: 8,
    holdMs: 1,
    failures: 0,
    unanswered: 0,
    acquisitions: 1000,
    acquisitionsPerSec: 400,
    utilisation: 0.5,
    waitP50: 10,
    waitP99: 20,
    waitMax: 30,
    gapP50: 1,
    gapP99: 2,
    holdMean: 1.2,
    selfHandoffs: 0,
    jain: 1,
    overlaps: 0,
    ...fields,
  };
}

function results(rows: ContentionResult[], fields: Partial<BenchResults> = {}): BenchResults {
  return {
    date: '2026-11-24T00:00:00.000Z',
    quick: false,
    machine: { cpus: 2, cpu: 'test', node: 'v20', redis: '7' },
    durationSec: 1,
    single: [],
    concurrent: [],
    contention: rows,
    notificationFloors: [{ spacingMs: 1, samples: 100, p50: 0.4, p99: 1, mean: 0.5 }],
    watchdog: [],
    multi: [],
    missing: [],
    ...fields,
  };
}

const find = (checks: TargetCheck[], scenario: number, target: string, subject = ''): TargetCheck => {
  const found = checks.find(
    (check) => check.scenario === scenario && check.target.startsWith(target) && check.subject.includes(subject),
  );
  assert.ok(found, `no check of scenario ${scenario} starting "${target}"`);
  return found;
};

/** A throughput row whose rounds are `rounds` (pairs/s). */
const throughput = (library: string, rounds: number[]) => ({ library, pairsPerSec: rounds[1]!, rounds });

describe('bench targets', () => {
  it('scenario 1: at least 0.95 of the floor round by round; the best peer is information, never a target', () => {
    // Three rounds; the machine slows down in the last one for everyone alike.
    const checks = checkTargets(
      results([], {
        single: [
          throughput(FLOOR_TWO_SCRIPTS, [1000, 1000, 600]),
          throughput(FLOOR_LOCK_SCRIPTS, [990, 980, 594]),
          throughput('latchkey Lock', [960, 950, 576]),
          throughput('latchkey FairLock', [930, 940, 560]),
          throughput('redlock', [1000, 900, 500]), // the highest median, but latchkey beats it round by round
          throughput('redis-semaphore', [990, 1000, 594]),
        ],
      }),
    );
    const lock = find(checks, 1, 'pairs/s >= 0.95', 'latchkey Lock');
    assert.equal(lock.met, true);
    assert.match(lock.measured, /^0\.96x \(95% interval 0\.95-0\.96, 3 rounds\)$/);
    assert.match(lock.bound!, /two lock scripts sent bare reached 0\.99x/);
    assert.equal(find(checks, 1, 'pairs/s >= 0.95', 'latchkey FairLock').met, false);
    const peer = find(checks, 1, 'ratio to the best peer', 'latchkey Lock');
    assert.equal(peer.info, true);
    assert.match(peer.target, /redis-semaphore/);
    assert.match(peer.measured, /^0\.97x/);
  });

  it('scenario 2: at least 1.5x the best peer, round by round', () => {
    const checks = checkTargets(
      results([], {
        concurrent: [
          throughput('latchkey Lock', [1600, 1600, 900]),
          throughput('latchkey FairLock', [1400, 1500, 800]),
          throughput('redlock', [900, 1000, 500]),
          throughput('redis-semaphore', [1000, 1000, 600]),
        ],
      }),
    );
    const lock = find(checks, 2, 'pairs/s >= 1.5x', 'latchkey Lock');
    assert.equal(lock.met, true);
    assert.match(lock.target, /redis-semaphore/);
    assert.equal(find(checks, 2, 'pairs/s >= 1.5x', 'latchkey FairLock').met, false);
  });

  it('scenario 3: fairness 0.99 for every latchkey lock, and 0 overlaps always', () => {
    const checks = checkTargets(
      results([
        contention('latchkey Lock', { jain: 0.985 }),
        contention('latchkey FairLock', { jain: 0.995, overlaps: 1 }),
      ]),
    );
    assert.equal(find(checks, 3, "Jain's index >= 0.99", 'latchkey Lock').met, false);
    assert.equal(find(checks, 3, "Jain's index >= 0.99", 'latchkey FairLock').met, true);
    assert.equal(find(checks, 3, '0 overlaps', 'latchkey FairLock').met, false);
    // Wait p99 is no target any more: a barging peer's p99 hides its starved waiters.
    assert.equal(
      checks.some((check) => check.target.includes('p99')),
      false,
    );
  });

  it('scenario 3: wait max 10x below the best peer, with the ring as context', () => {
    const checks = checkTargets(
      results([
        contention(HAND_OVER_RING, { waitMax: 14 }),
        contention('latchkey Lock', { waitMax: 90 }),
        contention('latchkey FairLock', { waitMax: 110 }),
        contention('redis-semaphore', { waitMax: 2_000 }),
        contention('redlock', { waitMax: 1_000 }),
        contention(HAND_OVER_RING, { waitMax: 11 }),
      ]),
    );
    const lock = find(checks, 3, 'wait max', 'latchkey Lock');
    assert.equal(lock.met, true);
    assert.match(lock.target, /redlock: 1000 \/ 10 = 100\.0 ms/);
    assert.equal(lock.bound, "the hand-over ring's wait max: 14.0 and 11.0 ms");
    assert.equal(find(checks, 3, 'wait max', 'latchkey FairLock').met, false);
  });

  it('scenario 3: utilisation at least 0.95 of the mean of the ring runs of the same configuration', () => {
    const ring = (utilisation: number, holdMs = 1) => contention(HAND_OVER_RING, { utilisation, holdMs });
    const checks = checkTargets(
      results([
        ring(0.8),
        contention('latchkey Lock', { utilisation: 0.77 }), // 0.77 / 0.82 = 0.939
        contention('latchkey FairLock', { utilisation: 0.78 }), // 0.951
        ring(0.84),
        ring(0.95, 5),
        contention('latchkey Lock', { utilisation: 0.91, holdMs: 5 }), // 0.958
        ring(0.95, 5),
      ]),
    );
    const util = (subject: string) => find(checks, 3, 'utilisation', subject);
    assert.equal(util('latchkey Lock W=8 hold 1 ms').met, false);
    assert.match(util('latchkey Lock W=8 hold 1 ms').target, /\(0\.820, mean of 2 runs\)/);
    assert.match(util('latchkey Lock W=8 hold 1 ms').measured, /^0\.770: 0\.939 of the ring$/);
    assert.equal(util('latchkey FairLock W=8 hold 1 ms').met, true);
    assert.equal(util('latchkey Lock W=8 hold 5 ms').met, true);
  });

  it('scenario 4: one renewal call per 1,000 held locks per period', () => {
    const row = (commandsPerPeriod: number) => ({
      library: 'latchkey Lock',
      locks: 10_000,
      periodMs: 1_000,
      commandsPerPeriod,
      innerPerPeriod: 20_000,
      budget: 10,
    });
    assert.equal(find(checkTargets(results([], { watchdog: [row(10)] })), 4, 'scripts').met, true);
    const missed = find(checkTargets(results([], { watchdog: [row(12)] })), 4, 'scripts');
    assert.equal(missed.met, false);
    assert.match(missed.target, /1 per 1,000 locks per node \(10\)/);
  });

  it('scenario 5: close to a bare script sent to the same servers at once', () => {
    const latency = (library: string, servers: number, acquireP50: number) => ({
      library,
      servers,
      acquireP50,
      acquireP99: acquireP50 * 3,
    });
    const run = (redLock: number): TargetCheck =>
      checkTargets(
        results([], {
          multi: [
            latency(floorOnServers(1), 1, 0.05),
            latency(floorOnServers(5), 5, 0.2),
            latency('latchkey Lock', 1, 0.06),
            latency('latchkey RedLock', 5, redLock),
            latency('redlock', 5, 0.22),
          ],
        }),
      )[0]!;
    assert.equal(run(0.25).met, true); // 1.25x the fan-out
    const missed = run(0.3);
    assert.equal(missed.met, false);
    assert.match(missed.measured, /\(1\.50x\)$/);
    assert.equal(missed.bound, 'one Lock took 1.20x a bare script on one server; redlock took 1.10x the fan-out');
  });

  it('scenario 6: deletion and takeover within 10 ms at p99 for the default detection; expiry and renewal-only are information', () => {
    const row = (fault: 'deletion' | 'takeover' | 'expiry', p99: number, detected = 200) => ({
      fault,
      locks: 200,
      detected,
      p50: p99 / 2,
      p99,
      max: p99 * 1.2,
    });
    const run = (detection: 'default' | 'renewal', rows: DetectionRun['rows'], falseAlarms = 0): DetectionRun => ({
      library: 'latchkey Lock',
      detection,
      watchdogTimeout: 30_000,
      rows,
      takenOver: 200,
      controls: 50,
      falseAlarms,
    });
    const checks = checkTargets(
      results([], {
        detection: [
          run('default', [row('deletion', 2.5), row('takeover', 3, 199), row('expiry', 120)]),
          run('renewal', [row('deletion', 9_900), row('takeover', 9_800), row('expiry', 9_900)], 1),
        ],
      }),
    );
    const of = (subject: string) => checks.find((check) => check.scenario === 6 && check.subject.endsWith(subject))!;
    assert.equal(of('detection default, watchdogTimeout 30000 ms: deletion').met, true);
    // One takeover never noticed fails the target whatever the figures of the others.
    assert.equal(of('detection default, watchdogTimeout 30000 ms: takeover').met, false);
    assert.equal(of('detection default, watchdogTimeout 30000 ms: expiry').info, true);
    assert.equal(of('detection renewal, watchdogTimeout 30000 ms: deletion').info, true);
    assert.equal(of('detection renewal, watchdogTimeout 30000 ms').met, false); // a false alarm
    assert.equal(of('detection default, watchdogTimeout 30000 ms').met, true);
  });

  it('the hand-over table counts the hand-overs that had to confirm with a round trip', () => {
    const row = contention('latchkey Lock', {
      handOvers: { messages: 1000, byMessage: 990, byReply: 12, free: 3 },
    });
    assert.equal(roundTripShare(row), 0.01);
    assert.equal(roundTripShare(contention('redlock', {})), undefined);
    assert.match(handOverTable([row]), /\| latchkey Lock \| 8 \| 1 \| 1,000 \| 990 \| 12 \| 3 \| 1\.00% \|/);
  });

  it('renders without any issue number, an earlier run against the bars of today', () => {
    const text = renderTable(
      results([contention('latchkey Lock', {}), contention('redis-semaphore', { waitMax: 2_000 })]),
    );
    assert.match(text, /\nTargets\n/);
    assert.doesNotMatch(text, /issue/i);
  });

  it("the README's summary reads utilisation against the mean of the ring runs and totals the hand-overs", () => {
    const text = renderSummary(
      results([
        contention(HAND_OVER_RING, { utilisation: 0.78 }),
        contention('latchkey Lock', {
          utilisation: 0.76,
          handOvers: { messages: 300, byMessage: 297, byReply: 3, free: 1 },
        }),
        contention(HAND_OVER_RING, { utilisation: 0.82 }),
      ]),
    );
    assert.match(text, /\| hand-over ring \(mean of 2\) \| 8 \| 1 \| 0\.80 \| 1\.00 \|/);
    assert.match(text, /\| latchkey Lock \| 8 \| 1 \| 0\.76 \| 0\.95 \|/);
    assert.match(text, /confirmed by a round trip .*: 3 of 300 \(1\.00%; at most 1\.00% in one row\)/);
  });

  it('compares two runs on the figures of a regression', () => {
    const run = (lock: number[]) =>
      results([contention(HAND_OVER_RING, { utilisation: 0.8 }), contention('latchkey Lock', { utilisation: 0.76 })], {
        single: [
          throughput(FLOOR_TWO_SCRIPTS, [1000, 1000, 1000]),
          throughput('latchkey Lock', lock),
          throughput('redis-semaphore', [1000, 1000, 1000]),
        ],
      });
    const text = compareRuns(run([970, 960, 980]), run([900, 910, 890]));
    assert.match(text, /\| latchkey Lock \| 2026-11-24 00:00 \| 0\.97 \(0\.96-0\.98\) \| 0\.97 \(0\.96-0\.98\) \|/);
    assert.match(text, /\| 0\.90 \(0\.89-0\.91\) \|/);
    assert.match(text, /\| latchkey Lock \| 8 \| 1 \| 2026-11-24 00:00 \| 0\.950 \| – \|/);
  });
});
