import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { createCluster } from 'redis';
import { contextOf } from '../../src/client.js';
import { clusterSlot } from '../../src/redis/cluster-slot.js';
import { LockClient, type LockClientOptions } from '../../src/index.js';
import { startCluster, type TestCluster } from '../../harness/cluster.js';
import { startSentinel } from '../../harness/sentinel.js';
import { commandCalls } from '../../harness/server.js';
import { eventually, sleep } from '../../harness/eventually.js';

let cluster: TestCluster;
let admins: Redis[];
before(async () => {
  cluster = await startCluster();
  admins = cluster.nodes.map((node) => new Redis({ port: node.port, host: node.host }));
});
after(() => {
  for (const admin of admins) admin.disconnect();
});

const lockClient = (options?: LockClientOptions): LockClient => cluster.lockClient(options);

/** The primary that serves `key`'s slot (slots split evenly in node order). */
const adminOf = (key: string): Redis => admins[Math.floor(clusterSlot(key) / Math.ceil(16_384 / admins.length))]!;

describe('on a real Redis Cluster (3 primaries), ioredis and node-redis', () => {
  const clients: [string, (options?: LockClientOptions) => Promise<LockClient>][] = [
    ['ioredis', (options) => Promise.resolve(lockClient(options))],
    [
      'node-redis',
      async (options) => {
        const rootNodes = cluster.nodes.map((node) => ({ url: node.url }));
        const client = await createCluster({ rootNodes }).connect();
        const locks = new LockClient(client, options);
        after(async () => {
          await locks.shutdown();
          await client.close();
        });
        return locks;
      },
    ],
  ];
  for (const [name, make] of clients) {
    it(`${name}: no warning on the default settings (renewal finds losses on a Cluster, as documented)`, async () => {
      const locks = await make();
      const warnings: string[] = [];
      locks.on('warning', (warning) => warnings.push(warning.code));
      await locks.getLock(`quiet:${name}`).withLock(() => sleep(100));
      await sleep(200); // past the first read push detection would make (50 ms after the grant)
      assert.deepEqual(warnings, []);
    });

    it(`${name}: one renewal call per primary per period, whatever slots its locks are in`, async () => {
      const locks = await make({ watchdogTimeout: 60_000 });
      const handles = Array.from({ length: 300 }, (_, i) => locks.getLock(`per-node:${name}:${i}`));
      await Promise.all(handles.map((handle) => handle.lock()));
      await contextOf(locks).watchdog.renewAll(); // loads the renewal script on each node
      await Promise.all(admins.map((admin) => admin.config('RESETSTAT')));
      await contextOf(locks).watchdog.renewAll();
      const calls = await Promise.all(admins.map((admin) => commandCalls(admin, 'evalsha')));
      assert.deepEqual(calls, [1, 1, 1], `renewal calls per primary: ${calls.join(', ')}`);
      const perNode = await Promise.all(admins.map((admin) => commandCalls(admin, 'pexpire')));
      assert.equal(
        perNode.reduce((a, b) => a + b, 0),
        300,
        'every lock renewed once',
      );
      await Promise.all(handles.map((handle) => handle.unlock()));
    });

    it(`${name}: a waiter listens on its lock's shard (sharded pub/sub) and is woken by the release`, async () => {
      const holder = (await make()).getLock(`sharded:${name}`);
      const waiterClient = await make();
      await holder.lock();
      const waiting = waiterClient.getLock(`sharded:${name}`).tryLock({ waitTime: 10_000 });
      const channel = `latchkey:{sharded:${name}}:lock:hand-over:${waiterClient.id}`;
      const subscribers = async (): Promise<number> => {
        const [, count] = (await adminOf(channel).pubsub('SHARDNUMSUB', channel)) as [string, number];
        return Number(count);
      };
      // Polled, not slept on: a loaded machine may take more than a fixed pause to subscribe.
      await eventually(
        async () => (await subscribers()) === 1,
        5_000,
        'a subscription on the shard that serves the lock',
      );
      const released = Date.now();
      await holder.unlock();
      assert.equal(await waiting, true);
      assert.ok(Date.now() - released < 2_000, `woken ${Date.now() - released} ms after the release`);
      await waiterClient.getLock(`sharded:${name}`).forceUnlock();
    });
  }
});

describe('on a real Redis Cluster (3 primaries)', () => {
  it('locks exclude across clients and a waiter is woken by pub/sub', async () => {
    const a = lockClient().getLock('cluster:order:1');
    const b = lockClient().getLock('cluster:order:1');
    await a.lock();
    assert.equal(await b.tryLock(), false);
    const waiting = b.tryLock({ waitTime: 5_000 });
    await sleep(100);
    const released = Date.now();
    await a.unlock();
    assert.equal(await waiting, true);
    assert.ok(Date.now() - released < 2_000);
    await b.unlock();
  });

  it('locks of different names spread over all three primaries', async () => {
    const locks = lockClient();
    const handles = Array.from({ length: 30 }, (_, i) => locks.getLock(`spread:${i}`));
    for (const handle of handles) await handle.lock({ leaseTime: 30_000 });
    const perNode = await Promise.all(
      cluster.nodes.map(async (node) => {
        const redis = new Redis({ port: node.port, host: node.host });
        try {
          return (await redis.keys('latchkey:{spread:*')).length;
        } finally {
          redis.disconnect();
        }
      }),
    );
    assert.equal(
      perNode.reduce((a, b) => a + b, 0),
      30,
    );
    assert.ok(
      perNode.every((count) => count > 0),
      `keys per node: ${perNode.join(', ')}`,
    );
    for (const handle of handles) await handle.unlock();
  });

  it('the watchdog renews locks on every node', async () => {
    const locks = lockClient({ watchdogTimeout: 600 });
    const handles = Array.from({ length: 6 }, (_, i) => locks.getLock(`renewed:${i}`));
    for (const handle of handles) await handle.lock();
    await sleep(1_500);
    for (const handle of handles) assert.equal(await handle.isHeldByCurrentOwner(), true);
    for (const handle of handles) await handle.unlock();
  });

  it('every primitive runs its multi-key scripts on Cluster (one hash tag per primitive)', async () => {
    const locks = lockClient();
    const other = lockClient();

    const fair = locks.getFairLock('c-fair');
    await fair.lock();
    const fairWaiter = other.getFairLock('c-fair').tryLock({ waitTime: 5_000 });
    await sleep(50);
    await fair.unlock();
    assert.equal(await fairWaiter, true);

    const fenced = locks.getFencedLock('c-fenced');
    const first = await fenced.lockAndGetToken();
    await fenced.unlock();
    const second = await other.getFencedLock('c-fenced').lockAndGetToken();
    assert.ok(second > first);

    const rw = locks.getReadWriteLock('c-rw');
    await rw.readLock().lock();
    assert.equal(await other.getReadWriteLock('c-rw').readLock().tryLock(), true);
    assert.equal(await other.getReadWriteLock('c-rw').writeLock().tryLock(), false);
    await rw.readLock().unlock();

    const semaphore = locks.getSemaphore('c-sem');
    assert.equal(await semaphore.trySetPermits(2), true);
    await semaphore.acquire(2);
    assert.equal(await other.getSemaphore('c-sem').tryAcquire({ permits: 1 }), false);
    await semaphore.release(2);
    assert.equal(await semaphore.availablePermits(), 2);

    const expirable = locks.getPermitExpirableSemaphore('c-pes');
    await expirable.trySetPermits(1);
    const id = await expirable.acquire({ leaseTime: 10_000 });
    assert.equal(await other.getPermitExpirableSemaphore('c-pes').tryAcquire({ waitTime: 0 }), null);
    await expirable.release(id);

    const latch = locks.getCountDownLatch('c-latch');
    await latch.trySetCount(1);
    const done = other.getCountDownLatch('c-latch').await({ waitTime: 5_000 });
    await sleep(50);
    await latch.countDown();
    assert.equal(await done, true);
  });
});

/** Resolves with how long `signal` took to abort, or rejects after `ms`. */
function abortedWithin(signal: AbortSignal, ms: number): Promise<number> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the signal did not abort within ${ms} ms`)), ms);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve(Date.now() - started);
    });
  });
}

describe('loss detection by deployment', () => {
  it('through Sentinel (ioredis): a deleted key is told by Redis, long before a renewal', async () => {
    const sentinel = await startSentinel();
    const locks = new LockClient(sentinel.client(), { watchdogTimeout: 60_000 });
    try {
      const lease = await locks.getLock('pushed-via-sentinel').acquire();
      await sleep(300); // past the hold's first tracked read
      const primary = new Redis({ port: sentinel.primary.port, host: '127.0.0.1' });
      await primary.del('latchkey:{pushed-via-sentinel}:lock');
      primary.disconnect();
      // The next renewal is 20 s away: only the pushed invalidation can tell it this soon.
      await abortedWithin(lease.signal, 5_000);
    } finally {
      await locks.shutdown();
    }
  });

  it('on a Cluster: no tracking, so a deleted key is found by the next renewal', async () => {
    const locks = lockClient({ watchdogTimeout: 900 });
    const lease = await locks.getLock('renewed-on-cluster').acquire();
    await adminOf('latchkey:{renewed-on-cluster}:lock').del('latchkey:{renewed-on-cluster}:lock');
    const took = await abortedWithin(lease.signal, 3_000);
    assert.ok(took <= 3_000, `found after ${took} ms`);
    const clients = await Promise.all(admins.map((admin) => admin.client('LIST') as Promise<string>));
    assert.ok(!clients.join('\n').includes('name=latchkey-'), 'no tracking connection on a Cluster');
  });
});

describe('through a real Sentinel', () => {
  it('finds the primary and locks on it', async () => {
    const sentinel = await startSentinel();
    const a = new LockClient(sentinel.client());
    const b = new LockClient(sentinel.client());
    try {
      await a.getLock('via-sentinel').lock();
      assert.equal(await b.getLock('via-sentinel').tryLock(), false);
      const primary = new Redis({ port: sentinel.primary.port, host: '127.0.0.1' });
      assert.equal(await primary.exists('latchkey:{via-sentinel}:lock'), 1);
      primary.disconnect();
      await a.getLock('via-sentinel').forceUnlock();
    } finally {
      await Promise.all([a.shutdown(), b.shutdown()]);
    }
  });
});
