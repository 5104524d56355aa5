import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { LockClient, type Lock, type LockClientOptions, type LockLease } from '../../src/index.js';
import { clusterSlot } from '../../src/redis/cluster-slot.js';
import { shutDownAfterFile } from '../../harness/cleanup.js';
import { startReplicatedCluster, type ReplicatedCluster } from '../../harness/replicated-cluster.js';

/** The hash slot of a lock name's keys (`latchkey:{name}:…`). */
const slotOf = (name: string): number => clusterSlot(`{${name}}`);

/**
 * Locks on a real Cluster of 3 primaries with replicas, through a manual failover, a slot
 * migration and a killed primary, with ioredis and node-redis. In each case a holder keeps its
 * lock (its replica had it), waiters queued behind it ride out the event and get the lock when it
 * is released, and nobody gets it twice.
 */
let cluster: ReplicatedCluster;
before(async () => {
  cluster = await startReplicatedCluster();
});

/** A lease long enough to outlast a failover (~3 s) between renewals; renewed every 2 s. */
const OPTIONS: LockClientOptions = { watchdogTimeout: 6_000, commandTimeout: 8_000 };

const clients: Record<string, () => Promise<LockClient>> = {
  ioredis: () => Promise.resolve(shutDownAfterFile(new LockClient(cluster.ioredis(), OPTIONS))),
  'node-redis': async () => shutDownAfterFile(new LockClient(await cluster.nodeRedis(), OPTIONS)),
};

/** A holder and `count` waiters (each on a client of its own) queued on `name`. */
async function holderAndWaiters(
  make: () => Promise<LockClient>,
  name: string,
  count: number,
): Promise<{ lease: LockLease; waits: Promise<boolean>[]; handles: Lock[] }> {
  const lease = await (await make()).getLock(name).acquire();
  const handles = await Promise.all(Array.from({ length: count }, async () => (await make()).getLock(name)));
  const waits = handles.map((handle) => handle.tryLock({ waitTime: 30_000 }));
  // Awaited by handOverToAll; a test that fails before must not leave them unhandled.
  for (const waiting of waits) waiting.catch(() => undefined);
  await new Promise((resolve) => setTimeout(resolve, 300)); // queued
  return { lease, waits, handles };
}

/**
 * Releases the holder's lease, then lets each waiter that got the lock go in turn: every waiter
 * gets it once, one at a time (a second holder would find `inside` set).
 */
async function handOverToAll(lease: LockLease, waits: Promise<boolean>[], handles: Lock[]): Promise<void> {
  assert.equal(lease.signal.aborted, false, `the holder lost its lock: ${String(lease.signal.reason)}`);
  await lease.release();
  await inTurn(waits, handles);
}

/** Each waiter that got the lock holds it a moment and lets it go: one at a time, each once. */
async function inTurn(waits: Promise<boolean>[], handles: Lock[]): Promise<void> {
  let inside = false;
  await Promise.all(
    waits.map(async (waiting, i) => {
      assert.equal(await waiting, true, `waiter ${i} did not get the lock`);
      assert.equal(inside, false, 'two holders at once');
      inside = true;
      await new Promise((resolve) => setTimeout(resolve, 20));
      inside = false;
      await handles[i]!.unlock();
    }),
  );
}

/** How a call ended, and how long after it was made. */
interface Settled<T> {
  value?: T;
  error?: unknown;
  ms: number;
}

function settled<T>(call: Promise<T>): Promise<Settled<T>> {
  const started = Date.now();
  return call.then(
    (value) => ({ value, ms: Date.now() - started }),
    (error: unknown) => ({ error, ms: Date.now() - started }),
  );
}

/** A fresh lock name on a primary that still has a replica (a kill leaves its replica without one). */
async function nameOnReplicatedPrimary(prefix: string, index = 0): Promise<string> {
  const primaries = await cluster.primaries();
  const replicated = [];
  for (const primary of primaries) if ((await cluster.replicasOf(primary)).length > 0) replicated.push(primary);
  return cluster.nameOn(replicated[index % replicated.length]!, prefix);
}

describe('a Cluster through failover, migration and a killed primary', { concurrency: 1 }, () => {
  for (const [name, make] of Object.entries(clients)) {
    it(`${name}: manual failover under a held lock and its queue`, async () => {
      const lock = await nameOnReplicatedPrimary(`failover:${name}`);
      const { lease, waits, handles } = await holderAndWaiters(make, lock, 3);
      const failover = await cluster.manualFailover(lock);
      assert.notEqual(failover.to.port, failover.from.port);
      // A renewal period goes by on the new primary: the hold is renewed there.
      await new Promise((resolve) => setTimeout(resolve, 2_500));
      await handOverToAll(lease, waits, handles);
    });
  }

  for (const [name, make] of Object.entries(clients)) {
    it(`${name}: slot migration under held locks and their queues, a release while it moves`, async () => {
      const primaries = await cluster.primaries();
      const lock = await cluster.nameOn(primaries[0]!, `migrating:${name}`);
      const { lease, waits, handles } = await holderAndWaiters(make, lock, 3);
      // Another lock in the same slot is released while the slot moves: the release is retried
      // through TRYAGAIN / ASK until it lands, and its waiter gets the lock.
      const sibling = cluster.nameInSlot(slotOf(lock), `sibling:${name}`);
      const other = await holderAndWaiters(make, sibling, 1);
      const moving = cluster.migrateSlot(slotOf(lock), primaries[1]!);
      const released = other.lease.release();
      await moving;
      await released;
      assert.equal(await other.waits[0], true, 'the waiter behind the release during the move got the lock');
      await other.handles[0]!.unlock();
      // Past a renewal on the new node (the renewal batch finds the key moved and renews it there).
      await new Promise((resolve) => setTimeout(resolve, 2_500));
      await handOverToAll(lease, waits, handles);
    });
  }

  for (const [name, make] of Object.entries(clients)) {
    it(`${name}: a release, an attempt and a queue while the slot stops halfway through its migration`, async () => {
      const primaries = await cluster.primaries();
      const lock = await cluster.nameOn(primaries[0]!, `halfway:${name}`);
      const { lease, waits, handles } = await holderAndWaiters(make, lock, 2);
      const late = (await make()).getLock(lock);
      let released: Promise<void> | undefined;
      // The keys move one at a time, and the slot stays as it is a while before the first and the
      // second: scripts that run then find the slot migrating with the keys on the source, then
      // split between the two nodes. A script that wrote before failing there would leave the
      // lock deleted and not handed over (a release) or a queue half updated (an attempt).
      await cluster.migrateSlot(slotOf(lock), primaries[1]!, {
        batch: 1,
        beforeBatch: async (moved) => {
          if (moved === 0) {
            assert.equal(lease.signal.aborted, false, `the holder lost its lock: ${String(lease.signal.reason)}`);
            released = lease.release();
            released.catch(() => undefined); // awaited below
            const attempt = late.tryLock({ waitTime: 30_000 });
            attempt.catch(() => undefined); // awaited by inTurn
            waits.push(attempt);
            handles.push(late);
          }
          if (moved <= 1) await new Promise((resolve) => setTimeout(resolve, 500));
        },
      });
      await released;
      await inTurn(waits, handles);
    });
  }

  for (const [name, make] of Object.entries(clients)) {
    it(`${name}: a wait that subscribes through a slot map a finished migration made stale`, async () => {
      const primaries = await cluster.primaries();
      const locks = await make();
      // Its subscriber connection is made, and has read the slot map, before the slot moves.
      const warm = await cluster.nameOn(primaries[0]!, `warm:${name}`);
      const warmHolder = await (await make()).getLock(warm).acquire();
      const warmLock = locks.getLock(warm);
      const warming = warmLock.tryLock({ waitTime: 10_000 });
      await new Promise((resolve) => setTimeout(resolve, 200));
      await warmHolder.release();
      assert.equal(await warming, true);
      await warmLock.unlock();
      const lock = await cluster.nameOn(primaries[0]!, `stale:${name}`);
      await cluster.migrateSlot(slotOf(lock), primaries[1]!);
      // Its subscriber still maps the slot to the old node, which answers SSUBSCRIBE with MOVED
      // (ioredis 5.11 then refreshes its map and subscribes again, but never answers the call).
      const holder = await (await make()).getLock(lock).acquire();
      const started = Date.now();
      const handle = locks.getLock(lock);
      const waiting = handle.tryLock({ waitTime: 30_000 });
      await new Promise((resolve) => setTimeout(resolve, 300));
      await holder.release();
      assert.equal(await waiting, true);
      // Handed over by message: a subscription left unanswered would have held the wait for commandTimeout.
      const waited = Date.now() - started;
      assert.ok(waited < OPTIONS.commandTimeout! / 2, `the wait took ${waited} ms`);
      await handle.unlock();
    });
  }

  Object.entries(clients).forEach(([name, make], index) => {
    it(`${name}: a killed primary, its replica promoted, under a held lock and its queue, and calls before it took over`, async () => {
      const lock = await nameOnReplicatedPrimary(`killed:${name}`, index);
      const { lease, waits, handles } = await holderAndWaiters(make, lock, 3);
      // Other locks of the slot, asked for while no live node serves it: one try, and a wait.
      const locks = await make();
      const tried = locks.getLock(cluster.nameInSlot(slotOf(lock), `orphaned-try:${name}`));
      const waited = locks.getLock(cluster.nameInSlot(slotOf(lock), `orphaned-wait:${name}`));
      await waited.lock(); // the client is connected to the primary that is killed
      await waited.unlock();
      let calls: { try: Promise<Settled<boolean>>; wait: Promise<Settled<boolean>> } | undefined;
      const kill = await cluster.killPrimary(lock, {
        afterKill: () =>
          (calls = { try: settled(tried.tryLock()), wait: settled(waited.tryLock({ waitTime: 20_000 })) }),
      });
      assert.ok(kill.ms < 10_000, `promotion took ${kill.ms} ms`);
      // Neither sits out commandTimeout on the dead node's connection. The try gets the free lock or
      // says Redis is unavailable (never "held"); the wait gets it once the replica took over.
      const attempt = await calls!.try;
      assert.ok(attempt.ms < OPTIONS.commandTimeout!, `the try took ${attempt.ms} ms`);
      if (attempt.error === undefined) assert.equal(attempt.value, true);
      else assert.equal((attempt.error as { code?: string }).code, 'LATCHKEY_REDIS_UNAVAILABLE');
      if (attempt.value) await tried.unlock();
      const wait = await calls!.wait;
      assert.equal(wait.error, undefined);
      assert.equal(wait.value, true);
      assert.ok(wait.ms < OPTIONS.commandTimeout!, `the wait took ${wait.ms} ms`);
      await waited.unlock();
      await new Promise((resolve) => setTimeout(resolve, 2_500));
      const released = Date.now();
      await handOverToAll(lease, waits, handles);
      // Handed over by message: the waiters' channels moved to the new primary. Deaf, each would
      // wait for the end of the lease it was last told of (up to watchdogTimeout).
      const handedOver = Date.now() - released;
      assert.ok(handedOver < OPTIONS.watchdogTimeout! / 2, `the hand-overs took ${handedOver} ms`);
    });
  });
});
