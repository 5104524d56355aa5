// The Lock API: waits and leases, re-entry, owners, leases as disposables, and cancelling a wait.
import assert from 'node:assert/strict';
import { Redis } from 'ioredis';
import { LockClient, LockNotHeldError } from 'latchkey';

const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
const locks = new LockClient(redis);

// Wait up to 2 s; hold for at most 10 s (no watchdog: the lease ends by itself).
const stock = locks.getLock('stock:10100101');
if (await stock.tryLock({ waitTime: 2_000, leaseTime: 10_000 })) {
  try {
    assert.ok((await stock.remainTimeToLive()) <= 10_000);
  } finally {
    await stock.unlock();
  }
}

// Every acquisition is its own owner, even through one shared handle: concurrent tasks exclude
// each other. Inside withLock() (or scope()) the same lock re-enters instead.
const job = locks.getLock('job:nightly');
await job.withLock(async () => {
  await job.withLock(async () => assert.equal(await job.getHoldCount(), 2)); // nested: re-entered
});
await locks.scope(async () => {
  await job.lock(); // Redisson style: lock(); lock(); unlock(); unlock() as one owner
  await job.lock();
  await job.unlock();
  await job.unlock();
});

// An owner that holds nothing cannot unlock: LockNotHeldError (Java's IllegalMonitorStateException).
await job.lock();
await assert.rejects(locks.getLock('job:nightly').unlock(), LockNotHeldError);
await job.unlock();

// acquire() returns a lease: `await using lease = await lock.acquire()` releases it at the end of
// the block (TypeScript 5.2+ lowers the syntax); the same by hand:
const lease = await locks.getLock('report').acquire({ waitTime: 1_000 });
try {
  assert.equal(lease.signal.aborted, false); // aborts with LockLostError if the lock is lost
} finally {
  await lease.release();
}

// Cancel a wait with an AbortSignal: it rejects with the signal's reason, nothing is left queued.
await job.lock();
const gaveUp = await locks
  .getLock('job:nightly')
  .lock({ signal: AbortSignal.timeout(100) })
  .catch((error: unknown) => error);
assert.ok(gaveUp instanceof DOMException && gaveUp.name === 'TimeoutError');
await job.unlock();

console.log('lock API example done');
await locks.shutdown();
redis.disconnect();
