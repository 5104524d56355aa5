/**
 * A step of the client's wall clock (NTP correcting it, a VM resumed, an operator) must not change
 * what a lease is believed to be worth: leases, deadlines and pauses are measured on the monotonic
 * clock. Here the step is made by replacing Date.now in this process only; Redis's clock, and so
 * the TTL it counts down, is untouched, as when only the client's host steps.
 */
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { startServer, type TestServer } from '../../harness/server.js';

let server: TestServer;
before(async () => {
  server = await startServer();
});

/** Runs `fn` with this process's wall clock moved by `stepMs`. */
async function withWallClockStep<T>(stepMs: number, fn: () => Promise<T>): Promise<T> {
  const realNow = Date.now;
  Date.now = () => realNow() + stepMs;
  try {
    return await fn();
  } finally {
    Date.now = realNow;
  }
}

describe('a step of the wall clock', () => {
  it('back 10 s: a fixed lease still ends when Redis ends it, before another client takes the lock', async () => {
    const lease = await server.lockClient().getLock('clock-back').acquire({ leaseTime: 1_000 });
    const abortedAt = new Promise<number>((resolve) =>
      lease.signal.addEventListener('abort', () => resolve(performance.now()), { once: true }),
    );
    await withWallClockStep(-10_000, async () => {
      // Redis expires the key after 1 s: the other client gets the lock then.
      const other = server.lockClient().getLock('clock-back');
      assert.equal(await other.tryLock({ waitTime: 5_000 }), true);
      const takenAt = performance.now();
      assert.equal(lease.signal.aborted, true, 'the first holder still believes it holds the lock another client took');
      assert.ok((await abortedAt) <= takenAt);
      await other.unlock();
    });
  });

  it('forward 60 s: a renewed lock is not reported lost while Redis still holds it', async () => {
    const lock = server.lockClient({ watchdogTimeout: 3_000 }).getLock('clock-forward');
    const lease = await lock.acquire();
    await withWallClockStep(60_000, async () => {
      await new Promise((resolve) => setTimeout(resolve, 2_500)); // past the first renewal
      assert.equal(lease.signal.aborted, false, `a false loss: ${String(lease.signal.reason)}`);
      assert.equal(await lock.isLocked(), true, 'renewed: Redis still holds it');
    });
    await lease.release();
  });
});
