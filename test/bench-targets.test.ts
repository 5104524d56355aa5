import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { BenchResults } from '../bench/report.js';
import type { ContentionResult } from '../bench/scenarios/contention.js';
import { checkTargets } from '../bench/targets.js';

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

function results(rows: ContentionResult[]): BenchResults {
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
  };
}

describe('bench targets', () => {
  it('a peer that starves a worker past its 99th percentile makes the p99 bar unreachable for any lock', () => {
    // 7 waiters x 1.2 ms hold: every lock's mean wait is >= 8.4 ms (Little's law). A peer with p99
    // 3 ms and max 4 s sets the bars at 0.3 ms (p99) and 400 ms (max): with no wait above 400 ms,
    // 99% of the waits cannot all be under (8.4 - 4) / 0.99 = 4.4 ms.
    const checks = checkTargets(
      results([contention('latchkey Lock', { waitP99: 20 }), contention('redlock', { waitP99: 3, waitMax: 4_000 })]),
    );
    const p99 = checks.find((check) => check.target.startsWith('wait p99'))!;
    assert.equal(p99.met, false);
    assert.equal(p99.outOfReach, true);
    assert.match(p99.bound!, /p99 >= 4\.4 ms/);
  });

  it('a bar a lock could reach is reported as missed, not out of reach', () => {
    const checks = checkTargets(
      results([
        contention('latchkey Lock', { waitP99: 30 }),
        contention('redis-semaphore', { waitP99: 250, waitMax: 600 }),
      ]),
    );
    const p99 = checks.find((check) => check.target.startsWith('wait p99'))!;
    assert.equal(p99.met, false);
    assert.equal(p99.outOfReach, false);
  });

  it('utilisation is bounded by the hold and the notification floor of the same run', () => {
    const checks = checkTargets(results([contention('latchkey Lock', { utilisation: 0.6, holdMean: 1.2 })]));
    const util = checks.find((check) => check.target.startsWith('utilisation'))!;
    assert.equal(util.met, false);
    assert.equal(util.outOfReach, true); // 1.2 / (1.2 + 0.5) = 0.706 < 0.9
    assert.match(util.bound!, /= 0\.706$/);
    const enough = checkTargets(results([contention('latchkey Lock', { utilisation: 0.93 })]));
    assert.equal(enough.find((check) => check.target.startsWith('utilisation'))!.met, true);
  });

  it('checks fairness by the bar of each lock and overlaps always', () => {
    const checks = checkTargets(
      results([
        contention('latchkey Lock', { jain: 0.96 }),
        contention('latchkey FairLock', { jain: 0.96, overlaps: 1 }),
      ]),
    );
    const jain = checks.filter((check) => check.target.startsWith("Jain's"));
    assert.deepEqual(
      jain.map((check) => check.met),
      [true, false],
    );
    assert.equal(
      checks.find((check) => check.subject.startsWith('latchkey FairLock') && check.target === '0 overlaps')!.met,
      false,
    );
  });
});
