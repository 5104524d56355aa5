// The Lock API: tryLock with waitTime and leaseTime, re-entrancy, leases with `await using`
// semantics, and what happens when another owner tries to unlock.
import assert from 'node:assert/strict';
import { Redis } from 'ioredis';
import { LockClient, LockNotHeldError } from 'latchkey';

const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
const locks = new LockClient(redis, { watchdogTimeout: 30_000 });

// Wait up to 2 s; hold for at most 10 s (no watchdog: the lease ends by itself).
const stock = locks.getLock('stock:10100101');
if (await stock.tryLock({ waitTime: 2_000, leaseTime: 10_000 })) {
  try {
    assert.ok((await stock.remainTimeToLive()) <= 10_000);
  } finally {
    await stock.unlock();
  }
}

// Re-entrant: the same handle (or anything inside one scope/withLock) may lock again.
const job = locks.getLock('job:nightly');
await job.lock();
await job.lock();
assert.equal(await job.getHoldCount(), 2);
await job.unlock();
await job.unlock();

// Another handle is another owner: it cannot unlock what it does not hold.
await job.lock();
await assert.rejects(locks.getLock('job:nightly').unlock(), LockNotHeldError);
await job.unlock();

// acquire() returns a lease; `await using lease = await lock.acquire()` releases it at the end
// of the block (TypeScript 5.2+ lowers the syntax); here the same by hand:
const lease = await locks.getLock('report').acquire({ waitTime: 1_000 });
try {
  assert.equal(lease.signal.aborted, false);
} finally {
  await lease[Symbol.asyncDispose]();
}

// Cancel waiting with an AbortSignal: nothing is left held or queued.
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
