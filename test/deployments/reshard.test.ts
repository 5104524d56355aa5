/**
 * An operator reshards (moves a slot with its keys to another primary, as `redis-cli --cluster
 * reshard` does) while locks of the slot are held, waited for, released and asked for: nothing
 * held is lost, no call fails, and a call that must wait out the move waits within its deadline.
 * Each stage of the move lasts as long as the locks' lease, so that a renewal refused through a
 * whole stage would lose them.
 */
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { LockClient, type LockClientOptions, type LockLease } from '../../src/index.js';
import { clusterSlot } from '../../src/redis/cluster-slot.js';
import { shutDownAfterFile } from '../../harness/cleanup.js';
import { startReplicatedCluster, type ReplicatedCluster } from '../../harness/replicated-cluster.js';

let cluster: ReplicatedCluster;
before(async () => {
  cluster = await startReplicatedCluster();
});

const LEASE_MS = 1_500;
const OPTIONS: LockClientOptions = { watchdogTimeout: LEASE_MS, commandTimeout: 8_000 };

const clients: Record<string, () => Promise<LockClient>> = {
  ioredis: () => Promise.resolve(shutDownAfterFile(new LockClient(cluster.ioredis(), OPTIONS))),
  'node-redis': async () => shutDownAfterFile(new LockClient(await cluster.nodeRedis(), OPTIONS)),
};

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** How a call ended, and how long after it was made. */
interface Settled<T> {
  readonly value?: T;
  readonly error?: unknown;
  readonly ms: number;
}

function settled<T>(call: Promise<T>): Promise<Settled<T>> {
  const started = Date.now();
  return call.then(
    (value) => ({ value, ms: Date.now() - started }),
    (error: unknown) => ({ error, ms: Date.now() - started }),
  );
}

describe('a reshard under held, waited-for and released locks', { concurrency: 1 }, () => {
  for (const [kind, make] of Object.entries(clients)) {
    it(`${kind}: nothing held is lost and every call succeeds, each stage lasting a lease`, async () => {
      const [from, to] = await cluster.primaries();
      const first = await cluster.nameOn(from!, `reshard:${kind}`);
      const slot = clusterSlot(`{${first}}`);
      const names = [first, ...[1, 2, 3, 4, 5, 6].map((i) => cluster.nameInSlot(slot, `reshard-${i}:${kind}`))];
      const holder = await make();
      const lost: string[] = [];
      holder.on('lockLost', (name) => lost.push(name));
      // Kept by the watchdog: renewed every 500 ms, lost after 1.5 s without a renewal.
      const leases: LockLease[] = await Promise.all([
        ...names.slice(0, 4).map((name) => holder.getLock(name).acquire()),
        // Read holds are renewed by a script of their own.
        ...names.slice(5, 7).map((name) => holder.getReadWriteLock(name).readLock().acquire()),
      ]);
      const waiterClient = await make();
      const waiter = waiterClient.getLock(names[0]!);
      const waiting = settled(waiter.tryLock({ waitTime: 30_000 }));
      // A latch re-reads its count only once a minute: a waiter deaf after the move would miss it.
      const latchName = cluster.nameInSlot(slot, `reshard-latch:${kind}`);
      await holder.getCountDownLatch(latchName).trySetCount(1);
      const opened = settled(waiterClient.getCountDownLatch(latchName).await({ waitTime: 60_000 }));
      await sleep(300);
      const calls: Promise<Settled<unknown>>[] = [];
      const asked = holder.getLock(names[4]!);
      const migration = await cluster.migrateSlot(slot, to!, {
        // Migrating, keys still on the source: a release and an acquisition wait the move out.
        beforeBatch: async (moved) => {
          if (moved > 0) return;
          calls.push(settled(leases[1]!.release()));
          calls.push(settled(asked.tryLock({ waitTime: 20_000 })));
          calls.push(settled(leases[4]!.release()));
          await sleep(LEASE_MS);
        },
        // Every key on the target, the slot still migrating.
        beforeSettle: async () => {
          calls.push(settled(leases[2]!.release()));
          await sleep(LEASE_MS);
        },
      });
      assert.ok(migration.keys > 0, 'the locks moved with the slot');
      const outcomes = await Promise.all(calls);
      outcomes.forEach((outcome, i) => {
        assert.equal(outcome.error, undefined, `call ${i} during the move failed: ${String(outcome.error)}`);
        assert.ok(outcome.ms < OPTIONS.commandTimeout!, `call ${i} took ${outcome.ms} ms`);
      });
      assert.equal(outcomes[1]!.value, true, 'the lock asked for during the move was granted');
      // A renewal period on the new primary.
      await sleep(LEASE_MS);
      assert.deepEqual(lost, [], 'locks were lost because the slot moved');
      const countedDown = Date.now();
      await holder.getCountDownLatch(latchName).countDown();
      const latch = await opened;
      assert.equal(latch.value, true, `the latch waiter: ${String(latch.error)}`);
      assert.ok(Date.now() - countedDown < 4_000, 'the latch waiter was deaf after the move');
      for (const lease of [leases[0]!, leases[3]!, leases[5]!]) assert.equal(lease.signal.aborted, false);
      await leases[0]!.release();
      const waited = await waiting;
      assert.equal(waited.value, true, `the waiter did not get the lock: ${String(waited.error)}`);
      await waiter.unlock();
      await leases[3]!.release();
      await leases[5]!.release();
      await asked.unlock();
    });
  }
});
