import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { LatchkeyError, LockLostError, RedisUnavailableError } from '../../src/index.js';
import { sleep } from '../../harness/eventually.js';
import { startServer } from '../../harness/server.js';
import { contextOf } from '../../src/client.js';

const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown): void => void unhandled.push(reason);
process.on('unhandledRejection', onUnhandled);
after(() => {
  process.off('unhandledRejection', onUnhandled);
});

/** Resolves when `signal` aborts, or rejects after `ms`. */
function aborted(signal: AbortSignal, ms: number): Promise<unknown> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return resolve(signal.reason);
    const timer = setTimeout(() => reject(new Error(`signal not aborted within ${ms} ms`)), ms);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve(signal.reason);
    });
  });
}

describe('Lock lost under long work', () => {
  it('aborts the signal and emits lockLost when the key is deleted behind the holder', async () => {
    const server = await startServer();
    const locks = server.lockClient({ watchdogTimeout: 300 });
    const lost: string[] = [];
    locks.on('lockLost', (name) => lost.push(name));
    const lock = locks.getLock('deleted');
    const result = lock.withLock(async (signal) => {
      await server.client().del('latchkey:{deleted}:lock');
      return aborted(signal, 3_000);
    });
    // The lock is gone, so withLock rejects: the caller learns the section was not exclusive.
    await assert.rejects(
      result,
      (error: unknown) => error instanceof LatchkeyError && error.code === 'LATCHKEY_LOCK_LOST',
    );
    assert.deepEqual(lost, ['deleted']);
    assert.equal(contextOf(locks).watchdog.size, 0);
  });

  it('aborts the signal when the server stays frozen past the lease', async () => {
    const server = await startServer();
    const locks = server.lockClient({ watchdogTimeout: 600, commandTimeout: 2_000 });
    const errors: unknown[] = [];
    locks.on('renewalError', (error) => errors.push(error));
    const lease = await locks.getLock('frozen').acquire();
    server.freeze();
    const frozenAt = Date.now();
    try {
      const reason = await aborted(lease.signal, 5_000);
      assert.ok(reason instanceof LockLostError, String(reason));
      assert.ok(Date.now() - frozenAt <= 600 + 1_000, `lost after ${Date.now() - frozenAt} ms`);
      assert.ok(errors.length >= 1 && errors[0] instanceof RedisUnavailableError);
    } finally {
      server.resume();
    }
    assert.equal(contextOf(locks).watchdog.size, 0);
  });
});

describe('Redis unreachable', () => {
  it('a frozen server makes tryLock settle by its waitTime, never hang', async () => {
    const server = await startServer();
    const locks = server.lockClient({ commandTimeout: 5_000 });
    const lock = locks.getLock('frozen-wait');
    await lock.tryLock(); // warm connection and scripts
    await lock.unlock();
    server.freeze();
    try {
      const started = Date.now();
      const outcome = await lock.tryLock({ waitTime: 300 }).catch((error: unknown) => error);
      const took = Date.now() - started;
      assert.ok(outcome === false || outcome instanceof RedisUnavailableError, String(outcome));
      assert.ok(took < 1_500, `settled after ${took} ms`);
    } finally {
      server.resume();
    }
    // The attempt that was cut may have reached Redis later: nothing of ours is left held.
    await sleep(200);
    assert.equal(await lock.isLocked(), false);
  });

  it('a server frozen while a waiter is parked cannot hold the waiter past its waitTime', async () => {
    const server = await startServer();
    const holder = server.lockClient().getLock('frozen-parked');
    await holder.lock({ leaseTime: 20_000 });
    const waiter = server.lockClient({ commandTimeout: 10_000 }).getLock('frozen-parked');
    const started = Date.now();
    const outcome = waiter.tryLock({ waitTime: 600 }).catch((error: unknown) => error);
    await sleep(200); // subscribed and parked by now
    server.freeze();
    try {
      const result = await outcome;
      const took = Date.now() - started;
      assert.ok(result === false || result instanceof RedisUnavailableError, String(result));
      // About 650 ms; a frozen call that held the wait would take the 10 s commandTimeout. The
      // margin is for a loaded machine's pauses.
      assert.ok(took < 3_000, `settled after ${took} ms`);
    } finally {
      server.resume();
    }
    await holder.unlock();
  });

  it('a dead server gives RedisUnavailableError with the cause, and no unhandled rejection', async () => {
    const server = await startServer();
    const locks = server.lockClient({ commandTimeout: 1_000 }, { maxRetriesPerRequest: 1, retryStrategy: () => null });
    const lock = locks.getLock('dead');
    await server.stop(true);
    const started = Date.now();
    await assert.rejects(lock.lock(), (error: unknown) => {
      assert.ok(error instanceof RedisUnavailableError);
      assert.ok(error.cause !== undefined || /did not answer/.test(error.message));
      return true;
    });
    assert.ok(Date.now() - started < 3_000);
    await sleep(50);
    assert.deepEqual(unhandled, []);
  });
});

describe('shutdown()', () => {
  it('stops renewal, aborts held leases, fails pending waits, keeps keys until they expire; idempotent', async () => {
    const server = await startServer();
    const holder = server.lockClient({ watchdogTimeout: 1_000 });
    const other = server.lockClient();
    const lease = await holder.getLock('shutdown').acquire();
    const blocked = server.lockClient().getLock('shutdown-wait');
    await blocked.lock();
    const waiting = holder
      .getLock('shutdown-wait')
      .lock()
      .then(
        () => 'acquired',
        (error: unknown) => error,
      );
    await sleep(50);
    await Promise.all([holder.shutdown(), holder.shutdown()]);
    assert.ok(lease.signal.aborted);
    const outcome = await waiting;
    assert.ok(outcome instanceof LatchkeyError && outcome.code === 'LATCHKEY_SHUT_DOWN', String(outcome));
    assert.equal(contextOf(holder).watchdog.size, 0);
    const ttl = await other.getLock('shutdown').remainTimeToLive();
    assert.ok(ttl > 0 && ttl <= 1_000, `ttl ${ttl}`);
    await sleep(1_200);
    assert.equal(await other.getLock('shutdown').isLocked(), false, 'expired without renewal');
    await assert.rejects(holder.getLock('x').lock(), /shut down/);
    await blocked.unlock();
  });
});
