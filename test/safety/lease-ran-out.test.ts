/**
 * When the lease ran out while the caller worked under the lock, the error it gets says the lock
 * was lost (LockLostError), not that it never held it (LockNotHeldError): from withLock(), and from
 * the lease's release() / dispose (what `await using` calls, where a second error would come
 * wrapped in a SuppressedError).
 */
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { LockLostError, type Lock, type LockClient } from '../../src/index.js';
import { sleep } from '../../harness/eventually.js';
import { startServer, type TestServer } from '../../harness/server.js';
import { outcome, show } from './helpers.js';

let server: TestServer;
before(async () => {
  server = await startServer();
});

const LEASE_MS = 200;
/** Long enough past the lease for it to be gone in Redis, with room for timers. */
const WORK_MS = 600;

const kinds: readonly [string, (locks: LockClient, name: string) => Lock][] = [
  ['Lock', (locks, name) => locks.getLock(name)],
  ['FencedLock', (locks, name) => locks.getFencedLock(name)],
  ['WriteLock', (locks, name) => locks.getReadWriteLock(name).writeLock()],
];

function assertLost(result: Awaited<ReturnType<typeof outcome>>, what: string): void {
  assert.ok(!result.ok, `${what} resolved although the lease had run out`);
  assert.ok(result.error instanceof LockLostError, `${what} rejected with ${show(result.error)}, not LockLostError`);
}

describe('the lease ran out while the caller worked', { timeout: 20_000 }, () => {
  for (const [kind, get] of kinds) {
    it(`${kind}.withLock(fn, { leaseTime }) with fn outlasting the lease rejects with LockLostError`, async () => {
      const lock = get(server.lockClient(), `with-lock-ran-out-${kind}`);
      const result = await outcome(lock.withLock(() => sleep(WORK_MS), { leaseTime: LEASE_MS }));
      assertLost(result, 'withLock');
    });

    it(`${kind}: the same when another client took the lock meanwhile`, async () => {
      const name = `with-lock-taken-${kind}`;
      const lock = get(server.lockClient(), name);
      const other = get(server.lockClient(), name);
      const working = outcome(lock.withLock(() => sleep(WORK_MS), { leaseTime: LEASE_MS }));
      await sleep(LEASE_MS + 150); // outside the callback: \`other\` is no nested owner
      assert.equal(await other.tryLock({ leaseTime: 5_000 }), true, 'the lease had not run out in Redis');
      assertLost(await working, 'withLock');
      await other.unlock();
    });

    it(`${kind}.acquire({ leaseTime }): release() and dispose after the lease ran out reject with LockLostError`, async () => {
      const lock = get(server.lockClient(), `acquire-ran-out-${kind}`);
      const released = await lock.acquire({ leaseTime: LEASE_MS });
      await sleep(WORK_MS);
      assertLost(await outcome(released.release()), 'lease.release()');

      const disposed = await lock.acquire({ leaseTime: LEASE_MS });
      await sleep(WORK_MS);
      assertLost(await outcome(disposed[Symbol.asyncDispose]()), 'lease[Symbol.asyncDispose]()');
    });
  }
});
