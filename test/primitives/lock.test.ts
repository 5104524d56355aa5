import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { assertNoKeyWithoutTtl } from '../../harness/keys.js';
import { LockLostError, LockNotHeldError, LockAcquireTimeoutError } from '../../src/index.js';
import { sleep } from '../../harness/eventually.js';
import { startServer, type TestServer } from '../../harness/server.js';

let server: TestServer;
before(async () => {
  server = await startServer();
});

describe('Lock: ownership and re-entrancy', () => {
  it('re-enters inside scope() on one handle and counts holds', async () => {
    const locks = server.lockClient();
    const lock = locks.getLock('reentrant');
    await locks.scope(async () => {
      await lock.lock();
      await lock.lock();
      assert.equal(await lock.getHoldCount(), 2);
      assert.equal(await lock.isHeldByCurrentOwner(), true);
      await lock.unlock();
      assert.equal(await lock.isLocked(), true);
      assert.equal(await lock.getHoldCount(), 1);
      await lock.unlock();
      assert.equal(await lock.isLocked(), false);
      assert.equal(await lock.getHoldCount(), 0);
    });
    assert.equal(await lock.remainTimeToLive(), -2);
  });

  it('outside a scope every acquisition is a new owner: a second lock() on one handle waits', async () => {
    const lock = server.lockClient().getLock('not-reentrant');
    await lock.lock();
    assert.equal(await lock.tryLock(), false);
    assert.equal(await lock.tryLock({ waitTime: 50 }), false);
    assert.equal(await lock.getHoldCount(), 1);
    await lock.unlock();
    assert.equal(await lock.isLocked(), false);
  });

  it('two handles of one name exclude each other, even on one client', async () => {
    const locks = server.lockClient();
    const a = locks.getLock('two-handles');
    const b = locks.getLock('two-handles');
    assert.equal(await a.tryLock(), true);
    assert.equal(await b.tryLock(), false);
    assert.equal(await b.isHeldByCurrentOwner(), false);
    await assert.rejects(b.unlock(), LockNotHeldError);
    await a.unlock();
    assert.equal(await b.tryLock(), true);
    await b.unlock();
  });

  it('excludes across two clients', async () => {
    const first = server.lockClient().getLock('two-clients');
    const second = server.lockClient().getLock('two-clients');
    await first.lock();
    assert.equal(await second.tryLock({ waitTime: 50 }), false);
    await first.unlock();
    assert.equal(await second.tryLock(), true);
    await second.unlock();
  });

  it('re-enters inside scope() and withLock() across handles', async () => {
    const locks = server.lockClient();
    await locks.scope(async () => {
      await locks.getLock('scoped').lock();
      assert.equal(await locks.getLock('scoped').tryLock(), true);
      assert.equal(await locks.getLock('scoped').getHoldCount(), 2);
      await locks.getLock('scoped').unlock();
      await locks.getLock('scoped').unlock();
    });
    const outer = locks.getLock('nested');
    const result = await outer.withLock(async () => {
      const inner = locks.getLock('nested');
      return inner.withLock(async () => inner.getHoldCount());
    });
    assert.equal(result, 2);
    assert.equal(await outer.isLocked(), false);
  });

  it('unlock through a fresh handle (the Redisson habit) says what happened and the two fixes', async () => {
    const locks = server.lockClient();
    await locks.getLock('not-held').lock();
    await assert.rejects(locks.getLock('not-held').unlock(), (error: unknown) => {
      assert.ok(error instanceof LockNotHeldError);
      assert.equal(error.code, 'LATCHKEY_LOCK_NOT_HELD');
      assert.match(error.message, /"not-held"/);
      assert.match(error.message, /handle that locked/);
      assert.match(error.message, /withLock\(\)/);
      assert.match(error.message, /scope\(\)/);
      return true;
    });
    assert.equal(await locks.getLock('not-held').isLocked(), true, 'the first lock is still held, as the message says');
    await locks.getLock('not-held').forceUnlock();
  });

  it('forceUnlock deletes whoever holds it', async () => {
    const holder = server.lockClient().getLock('forced');
    const other = server.lockClient().getLock('forced');
    await holder.lock({ leaseTime: 60_000 });
    assert.equal(await other.forceUnlock(), true);
    assert.equal(await other.forceUnlock(), false);
    assert.equal(await holder.isLocked(), false);
  });

  it('an owner whose second hold was forced open hears it lost, not the first release remembered', async () => {
    const locks = server.lockClient();
    const lock = locks.getLock('forced-again');
    await locks.scope(async () => {
      await lock.lock();
      await lock.unlock(); // leaves the release's marker behind, for repeats of that release
      await lock.lock(); // the same owner, a new hold
      assert.equal(await server.lockClient().getLock('forced-again').forceUnlock(), true);
      await assert.rejects(lock.unlock(), LockLostError);
    });
  });
});

describe('Lock: leases', () => {
  it('expires by itself after leaseTime and aborts the lease signal', async () => {
    const lock = server.lockClient().getLock('lease');
    const lease = await lock.acquire({ leaseTime: 200 });
    const ttl = await lock.remainTimeToLive();
    assert.ok(ttl > 0 && ttl <= 200, `ttl ${ttl}`);
    await sleep(350);
    assert.equal(await lock.isLocked(), false);
    assert.ok(lease.signal.aborted);
    assert.ok(lease.signal.reason instanceof LockLostError);
    // The work it guarded was not protected to its end: the release says the lock was lost.
    await assert.rejects(lease.release(), LockLostError);
  });

  it('the watchdog keeps a lock alive for several timeouts', async () => {
    const locks = server.lockClient({ watchdogTimeout: 300 });
    const lock = locks.getLock('watchdog');
    await lock.lock();
    await sleep(1_200);
    assert.equal(await lock.isHeldByCurrentOwner(), true);
    const ttl = await lock.remainTimeToLive();
    assert.ok(ttl > 0 && ttl <= 300, `ttl ${ttl}`);
    await lock.unlock();
    assert.equal(await lock.isLocked(), false);
  });

  it('withLock rejects with LockAcquireTimeoutError when waitTime elapses', async () => {
    const holder = server.lockClient().getLock('withlock-timeout');
    await holder.lock();
    const other = server.lockClient().getLock('withlock-timeout');
    let ran = false;
    await assert.rejects(
      // 500 ms: a loaded machine's slow call cut short by a shorter deadline is unavailability, not a timeout.
      other.withLock(() => (ran = true), { waitTime: 500 }),
      LockAcquireTimeoutError,
    );
    assert.equal(ran, false);
    await holder.unlock();
  });
});

describe('after these tests', () => {
  it('no latchkey key is left without a TTL', async () => {
    await assertNoKeyWithoutTtl(server.client());
  });
});
