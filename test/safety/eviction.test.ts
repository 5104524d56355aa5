import assert from 'node:assert/strict';
import { once } from 'node:events';
import { before, describe, it } from 'node:test';
import type { Redis } from 'ioredis';
import { type LatchkeyWarning, type LockLease } from '../../src/index.js';
import { eventually } from '../../harness/eventually.js';
import { startServer, type TestServer } from '../../harness/server.js';

/**
 * A server with maxmemory and an eviction policy other than noeviction deletes keys with a TTL
 * under memory pressure, held locks included: the client says so once, and a lock evicted behind
 * its holder is reported lost like any deletion.
 */
let lru: TestServer;
let safe: TestServer;
before(async () => {
  [lru, safe] = await Promise.all([
    startServer(['--maxmemory', '4mb', '--maxmemory-policy', 'allkeys-random']),
    startServer(['--maxmemory', '4mb']),
  ]);
});

/** Fills `redis` with ~`mb` MB of other data, so that the server evicts. */
async function fill(redis: Redis, mb: number): Promise<void> {
  const value = 'x'.repeat(1_024);
  for (let batch = 0; batch < mb; batch++) {
    const pipeline = redis.pipeline();
    for (let i = 0; i < 1_024; i++) pipeline.set(`filler:${batch}:${i}`, value, 'EX', 600);
    await pipeline.exec();
  }
}

describe('eviction', () => {
  it('warns once, naming the policy and the fix, the first time a client writes to such a server', async () => {
    const locks = lru.lockClient();
    const warnings: LatchkeyWarning[] = [];
    locks.on('warning', (warning) => warnings.push(warning));
    await locks.getLock('evict-warn-a').withLock(() => undefined);
    await locks.getLock('evict-warn-b').withLock(() => undefined);
    await eventually(() => warnings.length > 0, 2_000, 'the warning');
    assert.equal(warnings.length, 1);
    assert.equal(warnings[0]!.code, 'EVICTION_POLICY');
    assert.match(warnings[0]!.message, /allkeys-random/);
    assert.match(warnings[0]!.message, /noeviction/);
  });

  it('says nothing about a server that does not evict', async () => {
    const locks = safe.lockClient();
    const warnings: LatchkeyWarning[] = [];
    locks.on('warning', (warning) => warnings.push(warning));
    const lease = await locks.getLock('evict-quiet').acquire();
    await lease.release();
    // The check is one script after the first acquisition: give it time to answer.
    await locks.getLock('evict-quiet').withLock(() => new Promise((resolve) => setTimeout(resolve, 100)));
    assert.deepEqual(warnings, []);
  });

  for (const lossDetection of ['push', 'renewal'] as const) {
    it(`reports a held lock that the server evicted as lost (lossDetection: ${lossDetection})`, async () => {
      const locks = lru.lockClient({ watchdogTimeout: 1_500, lossDetection });
      locks.on('warning', () => undefined);
      const admin = lru.client();
      const names = Array.from({ length: 200 }, (_, i) => `evicted-${lossDetection}-${i}`);
      const leases: LockLease[] = await Promise.all(names.map((name) => locks.getLock(name).acquire()));
      const lost = once(locks, 'lockLost');
      await fill(admin, 12);
      assert.ok(Number(/evicted_keys:(\d+)/.exec(await admin.info('stats'))![1]) > 0, 'the server evicted');
      await lost;
      // Every lock whose key is gone is told, within a renewal period and a margin.
      const gone = async (): Promise<boolean[]> =>
        Promise.all(names.map(async (name) => (await admin.exists(`latchkey:{${name}}:lock`)) === 0));
      await eventually(
        async () => (await gone()).every((isGone, i) => !isGone || leases[i]!.signal.aborted),
        3_000,
        'every evicted lock reported lost',
      );
      // A lock still in Redis is never reported lost.
      const goneNow = await gone();
      leases.forEach((lease, i) => {
        if (!goneNow[i]) assert.equal(lease.signal.aborted, false, `${names[i]} is held, yet reported lost`);
      });
      assert.ok(
        leases.some((lease) => lease.signal.aborted),
        'some lock was evicted',
      );
      await Promise.all(leases.map((lease) => lease.release().catch(() => undefined)));
    });
  }
});
