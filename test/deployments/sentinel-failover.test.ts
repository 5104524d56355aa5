import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import {
  LockClient,
  LockLostError,
  RedisUnavailableError,
  type LockClientOptions,
  type LockLease,
} from '../../src/index.js';
import { directClient } from '../../harness/clients.js';
import { shutDownAfterFile } from '../../harness/cleanup.js';
import { startSentinelGroup, type SentinelGroup } from '../../harness/sentinel-group.js';

/**
 * Locks through Sentinel (1 master, 2 replicas, 3 Sentinels) with ioredis and node-redis: a
 * planned failover grants no lock twice; a failover that loses a grant (the master died before
 * any replica had it) is told to its holder, and `replicaAcks` refuses such a grant up front.
 */
let group: SentinelGroup;
before(async () => {
  group = await startSentinelGroup();
});

const clients: Record<string, (options?: LockClientOptions) => Promise<LockClient>> = {
  ioredis: (options) =>
    Promise.resolve(shutDownAfterFile(new LockClient(group.ioredis({ failoverDetector: true }), options))),
  'node-redis': async (options) => shutDownAfterFile(new LockClient(await group.nodeRedis(), options)),
};

/** Resolves once `signal` aborted, or rejects after `ms`. */
function abortedWithin(signal: AbortSignal, ms: number): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(() => reject(new Error(`the lease signal did not abort within ${ms} ms`)), ms);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

describe('through Sentinel: failovers', { concurrency: 1 }, () => {
  it('an ioredis client without failoverDetector is refused, naming the fix', () => {
    assert.throws(
      () => new LockClient(group.ioredis()),
      (error: unknown) => error instanceof TypeError && /failoverDetector: true/.test(error.message),
    );
  });

  it('a planned failover grants no lock twice: held locks stay held, free ones go to one client each', async () => {
    const before = { ioredis: await clients.ioredis!(), 'node-redis': await clients['node-redis']!() };
    const held: LockLease[] = [];
    const heldNames: string[] = [];
    for (const locks of Object.values(before))
      for (let i = 0; i < 5; i++) {
        heldNames.push(`planned:held:${locks.id}:${i}`);
        held.push(await locks.getLock(heldNames.at(-1)!).acquire());
      }
    const failover = await group.plannedFailover();
    assert.notEqual(failover.to.port, failover.from.port);
    // Clients that were connected before it and clients made after it race for the same locks.
    const after = { ioredis: await clients.ioredis!(), 'node-redis': await clients['node-redis']!() };
    const contenders = [...Object.values(before), ...Object.values(after)];
    const names = Array.from({ length: 20 }, (_, i) => `planned:free:${i}`);
    const wins = await Promise.all(
      names.map(async (name) => {
        const results = await Promise.all(
          contenders.map((locks) => locks.getLock(name).tryLock({ leaseTime: 30_000 })),
        );
        return results.filter(Boolean).length;
      }),
    );
    assert.deepEqual(wins, Array(20).fill(1), 'each lock granted exactly once');
    // The locks held through the failover are still held, by their holders only.
    for (const lease of held) assert.equal(lease.signal.aborted, false, String(lease.signal.reason));
    for (const locks of contenders.slice(2))
      for (const name of heldNames) assert.equal(await locks.getLock(name).tryLock(), false, name);
    await Promise.all(held.map((lease) => lease.release()));
  });

  for (const [name, make] of Object.entries(clients)) {
    it(`${name}: a grant lost with its master is told to the holder; replicaAcks refuses it`, async () => {
      const holder = await make({ watchdogTimeout: 2_000 });
      const careful = await make({ replicaAcks: 1, replicaAckTimeout: 200, commandTimeout: 1_000 });
      let lease: LockLease | undefined;
      let refused: unknown;
      await group.failoverBeforeReplication(async () => {
        // The master replicates to no one now: a plain grant succeeds, an acknowledged one cannot.
        lease = await holder.getLock(`unreplicated:${name}`).acquire();
        refused = await careful
          .getLock(`acked:${name}`)
          .tryLock()
          .catch((error: unknown) => error);
      });
      assert.ok(refused instanceof RedisUnavailableError, `replicaAcks: ${String(refused)}`);
      assert.match(refused.message, /0 of the 1 replicas/);
      // The promoted replica never saw the grant: the holder is told (renewal finds it gone, or
      // cannot renew before the lease ends), and the lock is free for others.
      await abortedWithin(lease!.signal, 10_000);
      assert.ok(lease!.signal.reason instanceof LockLostError);
      const master = await group.master();
      assert.equal(await directClient(master).exists(`latchkey:{unreplicated:${name}}:lock`), 0);
      const other = await make();
      assert.equal(await other.getLock(`unreplicated:${name}`).tryLock({ waitTime: 10_000 }), true);
    });
  }
});
