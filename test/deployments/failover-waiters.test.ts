/**
 * Waiters of every primitive, queued on one shard of a Cluster, across a manual failover of that
 * shard: whatever moves their subscription (the old primary unsubscribes them as it becomes a
 * replica), each must listen on the new primary and look again, so that a release, a permit or a
 * count-down made after the failover wakes it at once, not at its next timer (made long here: the
 * holders' lease and the waiters' refresh are 30 s, the latch's re-read a minute).
 */
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { LockClient, type Lock, type LockClientOptions } from '../../src/index.js';
import { shutDownAfterFile } from '../../harness/cleanup.js';
import { startReplicatedCluster, type ReplicatedCluster } from '../../harness/replicated-cluster.js';

let cluster: ReplicatedCluster;
before(async () => {
  cluster = await startReplicatedCluster();
});

const OPTIONS: LockClientOptions = { watchdogTimeout: 30_000, fairWaiterTimeout: 30_000, commandTimeout: 8_000 };

/** Far below every timer a deaf waiter would wait for. */
const WOKEN_WITHIN_MS = 4_000;

const clients: Record<string, () => Promise<LockClient>> = {
  ioredis: () => Promise.resolve(shutDownAfterFile(new LockClient(cluster.ioredis(), OPTIONS))),
  'node-redis': async () => shutDownAfterFile(new LockClient(await cluster.nodeRedis(), OPTIONS)),
};

/** A waiter queued behind something `holder` holds, and what lets it in. */
interface Queued {
  readonly label: string;
  readonly waiting: Promise<boolean>;
  readonly free: () => Promise<void>;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Every kind of waiter, on names of one shard: each is blocked by `holder`. */
async function queueEveryKind(
  holder: LockClient,
  waiter: LockClient,
  name: (kind: string) => string,
): Promise<Queued[]> {
  const lockKinds: [string, (locks: LockClient, name: string) => Lock][] = [
    ['Lock', (locks, n) => locks.getLock(n)],
    ['FairLock', (locks, n) => locks.getFairLock(n)],
    ['FencedLock', (locks, n) => locks.getFencedLock(n)],
    ['WriteLock', (locks, n) => locks.getReadWriteLock(n).writeLock()],
  ];
  const queued: Queued[] = [];
  for (const [label, get] of lockKinds) {
    const n = name(label);
    const held = get(holder, n);
    await held.lock();
    queued.push({ label, waiting: get(waiter, n).tryLock({ waitTime: 60_000 }), free: () => held.unlock() });
  }
  const readName = name('ReadLock');
  const writer = holder.getReadWriteLock(readName).writeLock();
  await writer.lock();
  const reader = waiter.getReadWriteLock(readName).readLock().tryLock({ waitTime: 60_000 });
  queued.push({ label: 'ReadLock', waiting: reader, free: () => writer.unlock() });

  const semaphore = holder.getSemaphore(name('Semaphore'));
  await semaphore.trySetPermits(0);
  const permit = waiter.getSemaphore(name('Semaphore')).tryAcquire({ waitTime: 60_000 });
  queued.push({ label: 'Semaphore', waiting: permit, free: () => semaphore.release() });

  const expirable = holder.getPermitExpirableSemaphore(name('PermitExpirableSemaphore'));
  await expirable.trySetPermits(1);
  const taken = await expirable.acquire();
  const lease = waiter.getPermitExpirableSemaphore(name('PermitExpirableSemaphore')).tryAcquire({ waitTime: 60_000 });
  queued.push({
    label: 'PermitExpirableSemaphore',
    waiting: lease.then((id) => id !== null),
    free: () => expirable.release(taken),
  });

  const latch = holder.getCountDownLatch(name('CountDownLatch'));
  await latch.trySetCount(1);
  const opened = waiter.getCountDownLatch(name('CountDownLatch')).await({ waitTime: 60_000 });
  queued.push({ label: 'CountDownLatch', waiting: opened, free: () => latch.countDown() });

  const members = ['a', 'b'].map((part) => name(`MultiLock-${part}`));
  const group = holder.getMultiLock(...members.map((member) => holder.getLock(member)));
  await group.lock();
  const groupWait = waiter
    .getMultiLock(...members.map((member) => waiter.getLock(member)))
    .tryLock({ waitTime: 60_000 });
  queued.push({ label: 'MultiLock', waiting: groupWait, free: () => group.unlock() });

  for (const { waiting } of queued) waiting.catch(() => undefined); // awaited below
  return queued;
}

describe('waiters of every primitive across a failover of their shard', { concurrency: 1 }, () => {
  for (const [kind, make] of Object.entries(clients)) {
    it(`${kind}: each is woken at once by what frees it after the failover`, async () => {
      const [primary] = await cluster.primaries();
      const prefix = await cluster.nameOn(primary!, `failover-waiters:${kind}`);
      const holder = await make();
      const waiter = await make();
      const queued = await queueEveryKind(holder, waiter, (label) => `${prefix}:${label}`);
      await sleep(500); // every wait subscribed and parked
      const failover = await cluster.manualFailover(prefix);
      assert.notEqual(failover.to.port, failover.from.port);
      await sleep(500);
      const late: string[] = [];
      await Promise.all(
        queued.map(async ({ label, waiting, free }) => {
          const started = Date.now();
          await free();
          const result = await Promise.race([waiting, sleep(WOKEN_WITHIN_MS).then(() => 'late' as const)]);
          if (result === 'late') late.push(`${label} (still waiting ${Date.now() - started} ms after it was freed)`);
          else assert.equal(result, true, `${label} did not get what it waited for`);
        }),
      );
      assert.deepEqual(late, [], 'waiters deaf after the failover');
    });
  }
});
