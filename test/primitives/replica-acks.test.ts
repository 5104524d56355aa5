import assert from 'node:assert/strict';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { before, describe, it } from 'node:test';
import { RedisUnavailableError } from '../../src/index.js';
import { eventually, sleep } from '../../harness/eventually.js';
import { startServer, type TestServer } from '../../harness/server.js';

let primary: TestServer;
let replica: TestServer;
before(async () => {
  primary = await startServer();
  replica = await startServer(['--replicaof', primary.host, String(primary.port)]);
  const admin = replica.client();
  await eventually(async () => (await admin.info('replication')).includes('master_link_status:up'), 10_000, 'sync');
});

describe('replicaAcks: an acquisition counts once replicas have it', () => {
  it('acquires when the replica acknowledges, on every kind of grant', async () => {
    const locks = primary.lockClient({ replicaAcks: 1 });
    const lock = locks.getLock('acked');
    await lock.lock();
    // WAIT returned: the replica has the grant the moment lock() resolves.
    assert.equal(await replica.client().exists('latchkey:{acked}:lock'), 1, 'the replica has the lock');
    await lock.unlock();
    const semaphore = locks.getSemaphore('acked-permits');
    await semaphore.trySetPermits(1);
    await semaphore.acquire();
    await semaphore.release();
    const readLock = locks.getReadWriteLock('acked-rw').readLock();
    await readLock.lock();
    await readLock.unlock();
  });

  it('a stalled replica makes the acquisition fail as unavailable (not busy), leaving nothing held', async () => {
    const locks = primary.lockClient({ replicaAcks: 1, replicaAckTimeout: 100, commandTimeout: 600 });
    replica.freeze();
    try {
      const unacknowledged = (error: unknown): boolean => {
        assert.ok(error instanceof RedisUnavailableError, String(error));
        assert.match(error.message, /0 of the 1 replicas asked for acknowledged "unacked" within 100 ms/);
        return true;
      };
      // One attempt: its grant was not acknowledged.
      await assert.rejects(locks.getLock('unacked').tryLock(), unacknowledged);
      assert.equal(await primary.client().exists('latchkey:{unacked}:lock'), 0, 'the grant was given back');
      // lock() tries again while commandTimeout allows, then gives up.
      const started = Date.now();
      await assert.rejects(locks.getLock('unacked').lock(), unacknowledged);
      assert.ok(Date.now() - started >= 500, `gave up after ${Date.now() - started} ms`);
      assert.equal(await primary.client().exists('latchkey:{unacked}:lock'), 0, 'the grant was given back');
      // A wait rides out the shortfall: it acquires once the replica is back within its waitTime.
      const waiting = locks.getLock('unacked').tryLock({ waitTime: 5_000 });
      await sleep(300);
      replica.resume();
      assert.equal(await waiting, true);
    } finally {
      replica.resume();
    }
  });

  it('an abort while the replicas are awaited is the answer at once; the grant is given back after WAIT', async () => {
    const locks = primary.lockClient({ replicaAcks: 1, replicaAckTimeout: 3_000, commandTimeout: 10_000 });
    replica.freeze();
    try {
      const controller = new AbortController();
      const reason = new Error('the caller gave up');
      const locking = locks.getLock('abort-in-wait').lock({ signal: controller.signal });
      // The grant is made at once; only WAIT, held up by the frozen replica, keeps lock() pending.
      await eventually(async () => (await primary.client().exists('latchkey:{abort-in-wait}:lock')) === 1);
      const aborted = Date.now();
      controller.abort(reason);
      await assert.rejects(locking, (error) => error === reason);
      const heard = Date.now() - aborted;
      assert.ok(heard < 1_500, `the abort was heard ${heard} ms after it (WAIT lasts 3 s)`);
      await eventually(
        async () => (await primary.client().exists('latchkey:{abort-in-wait}:lock')) === 0,
        8_000,
        'the grant given back',
      );
    } finally {
      replica.resume();
    }
  });

  it('takes a hand-over by a round trip, since a WAIT on its own connection covers only its own writes', async () => {
    const holder = primary.lockClient({ replicaAcks: 1 }).getLock('handed');
    const waiter = primary.lockClient({ replicaAcks: 1 }).getLock('handed');
    const acquisitions: { byMessage?: boolean }[] = [];
    const onAcquire = (message: unknown): void => void acquisitions.push(message as { byMessage?: boolean });
    subscribe('latchkey:lock:acquire', onAcquire);
    try {
      await holder.lock();
      const waiting = waiter.lock();
      await sleep(100);
      await holder.unlock();
      await waiting;
      assert.equal(acquisitions.at(-1)?.byMessage, false);
      await waiter.unlock();
    } finally {
      unsubscribe('latchkey:lock:acquire', onAcquire);
    }
  });
});
