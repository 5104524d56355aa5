import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FLOOR_TWO_SCRIPTS } from '../names.js';
import { renderTable } from '../report.js';
import type { RedisCostRow } from '../scenarios/redis-cost.js';
import type { HeldRow } from '../scenarios/scale.js';
import type { WaitersRow } from '../scenarios/waiters.js';
import { checkTargets } from '../targets.js';
import { find, results } from './fixtures.js';

const cost = (
  library: string,
  clients: number,
  scriptUs: number,
  fields: Partial<RedisCostRow> = {},
): RedisCostRow => ({
  library,
  clients,
  pairs: 3_000,
  scriptUs,
  scripts: 2,
  plainUs: 0,
  plain: 0,
  plainNames: [],
  inner: 4,
  cpuUs: scriptUs * 2,
  ...fields,
});

const held = (library: string, locks: number, fields: Partial<HeldRow> = {}): HeldRow => ({
  library,
  locks,
  periodMs: 3_333,
  renews: true,
  takeSec: 1,
  clientBytes: 2_000,
  redisBytes: 150,
  renewalScripts: locks / 1_000,
  renewalPlain: (2 * locks) / 1_000,
  renewalUs: locks * 5,
  budget: Math.ceil(locks / 1_000),
  lost: 0,
  ...fields,
});

const waiters = (library: string, count: number, locks: number, fields: Partial<WaitersRow> = {}): WaitersRow => ({
  library,
  waiters: count,
  locks,
  clientBytes: 5_000,
  redisBytes: 300,
  drained: count,
  drainMs: count / 5,
  capped: false,
  handOversPerSec: 5_000,
  scripts: 1,
  plain: 0.01,
  redisUs: 20,
  failures: 0,
  ...fields,
});

describe('bench targets: what a lock costs Redis, and scale', () => {
  it("scenario 7: latchkey's uncontended Lock pair spends at most redlock's script time in Redis", () => {
    const run = (lockUs: number) =>
      checkTargets(
        results([], {
          redisCost: [
            cost(FLOOR_TWO_SCRIPTS, 1, 3),
            cost('latchkey Lock', 1, lockUs),
            cost('latchkey Lock', 4, 12),
            cost('redlock', 1, 3.9),
            cost('redlock', 4, 5),
            cost('redis-semaphore', 1, 1.8, { scripts: 1, plain: 1, plainUs: 0.7, plainNames: ['set'] }),
          ],
        }),
      );
    const met = find(run(3.9), 7, 'Redis time inside scripts', 'latchkey Lock, uncontended');
    assert.equal(met.met, true);
    assert.match(met.target, /<= redlock's \(3\.9 µs\)/);
    assert.equal(met.bound, 'two bare scripts: 3.0 µs in scripts; redis-semaphore: 1.8 µs in scripts + 0.7 µs plain');
    const missed = find(run(9.2), 7, 'Redis time inside scripts', 'latchkey Lock, uncontended');
    assert.equal(missed.met, false);
    assert.equal(missed.measured, '9.2 µs in scripts (2.36x)');
    // Redis CPU per pair, uncontended and contended, is reported beside it.
    const cpu = find(run(9.2), 7, 'Redis CPU per pair', 'latchkey Lock, contended (4 clients)');
    assert.equal(cpu.info, true);
    assert.match(cpu.bound!, /^redlock: 10\.0 µs/);
  });

  it('scenario 8: renewal calls within the budget at every size, and no cost per held lock growing with their number', () => {
    const checks = checkTargets(
      results([], {
        held: [
          held('latchkey Lock', 10_000),
          held('latchkey Lock', 100_000, { renewalScripts: 104, clientBytes: 2_400, redisBytes: 200 }),
          held('latchkey Lock (lease)', 10_000, { renews: false, renewalScripts: 0, renewalUs: 0 }),
          held('latchkey Lock (lease)', 100_000, { renews: false, renewalScripts: 0, renewalUs: 0 }),
          held('redis-semaphore', 100_000, { renewalScripts: 100_000 }),
        ],
      }),
    );
    assert.equal(find(checks, 8, 'renewal calls', 'latchkey Lock, 10,000 held').met, true);
    const over = find(checks, 8, 'renewal calls', 'latchkey Lock, 100,000 held');
    assert.equal(over.met, false);
    assert.match(over.target, /\(100\)$/);
    // Memory per lock: 1.2x is within the tolerance, 1.33x is not.
    const heap = find(checks, 8, 'client heap per held lock', 'latchkey Lock');
    assert.equal(heap.met, true);
    assert.match(heap.target, /at 100,000 <= 1\.25x its value at 10,000$/);
    assert.equal(heap.measured, '2,400 B against 2,000 B (1.20x)');
    assert.equal(find(checks, 8, 'Redis memory per held lock', 'latchkey Lock').met, false);
    assert.equal(find(checks, 8, 'Redis time per held lock', 'latchkey Lock').met, true);
    // Nothing renews a leased lock: no budget or renewal time is checked for it, memory is.
    assert.equal(find(checks, 8, 'client heap per held lock', 'latchkey Lock (lease)').met, true);
    assert.equal(
      checks.some((check) => check.subject.startsWith('latchkey Lock (lease)') && check.target.includes('renewal')),
      false,
    );
    // The peers renew each lock on its own: no latchkey budget applies to them.
    assert.equal(
      checks.some((check) => check.subject.startsWith('redis-semaphore')),
      false,
    );
  });

  it('scenario 8: every latchkey waiter drained, the cost per hand-over not growing with the queue; the peers reported', () => {
    const checks = checkTargets(
      results([], {
        waiters: [
          waiters('latchkey Lock', 1_000, 1),
          waiters('latchkey Lock', 10_000, 1, { scripts: 1.56, redisUs: 31 }),
          waiters('latchkey Lock', 1_000, 100),
          waiters('latchkey Lock', 10_000, 100, { capped: true, drained: 9_000, drainMs: 20_000 }),
          waiters('redis-semaphore', 10_000, 1, { capped: true, drained: 51, drainMs: 20_000, handOversPerSec: 2.55 }),
        ],
      }),
    );
    assert.equal(find(checks, 8, 'every waiter drained', 'latchkey Lock, 10,000 waiters on 1 lock').met, true);
    assert.equal(find(checks, 8, 'every waiter drained', 'latchkey Lock, 10,000 waiters on 100 locks').met, false);
    const calls = find(checks, 8, 'Redis commands per hand-over', 'latchkey Lock, waiters on 1 lock');
    assert.equal(calls.met, false);
    assert.equal(calls.measured, '1.57 against 1.01 (1.55x)');
    assert.equal(find(checks, 8, 'Redis time per hand-over', 'latchkey Lock, waiters on 1 lock').met, false);
    assert.equal(find(checks, 8, 'client heap per waiter', 'latchkey Lock, waiters on 1 lock').met, true);
    assert.equal(find(checks, 8, 'Redis commands per hand-over', 'latchkey Lock, waiters on 100 locks').met, true);
    const peer = find(checks, 8, 'every waiter drained', 'redis-semaphore, 10,000 waiters on 1 lock');
    assert.equal(peer.info, true);
    assert.match(peer.measured, /^51 in 20,000 ms \(3 hand-overs\/s; all would take 3,922 s at that rate\)$/);
  });

  it('prints the tables of scenarios 7 and 8', () => {
    const text = renderTable(
      results([], {
        redisCost: [cost('redis-semaphore', 1, 1.8, { scripts: 1, plain: 1, plainUs: 0.7, plainNames: ['set'] })],
        held: [held('latchkey Lock (lease)', 10_000, { renews: false })],
        waiters: [waiters('redlock', 10_000, 1, { capped: true, drained: 650 })],
      }),
    );
    assert.match(text, /\| redis-semaphore \| 1 \| 3,000 \| 1\.8 \| 1\.00 \| 0\.7 \| 1\.00 \(set\) \| 4\.0 \| 3\.6 \|/);
    assert.match(text, /\| latchkey Lock \(lease\) \(no renewal\) \| 10,000 \|/);
    assert.match(text, /\| redlock \| 10,000 \| 1 \| 5,000 \| 300 \| 650 \(cap reached\) \|/);
  });
});
