/**
 * One handle shared by concurrent tasks must exclude them (docs/guarantees.md, 2. Who owns a hold):
 * every acquisition is a new owner unless it runs inside the callback of a withLock()/scope() that
 * already holds that lock.
 */
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { sleep } from '../../harness/eventually.js';
import { startServer, type TestServer } from '../../harness/server.js';

let server: TestServer;
before(async () => {
  server = await startServer();
});

const TASKS = 3;
const HOLD_MS = 50;

/** Counts tasks inside a critical section at once; `max` is the most ever seen together. */
function section(): { enter(): void; leave(): void; readonly max: number } {
  let inside = 0;
  let max = 0;
  return {
    enter() {
      max = Math.max(max, ++inside);
    },
    leave() {
      inside--;
    },
    get max() {
      return max;
    },
  };
}

/** Runs `task` TASKS times concurrently. */
async function concurrently(task: () => Promise<void>): Promise<void> {
  await Promise.all(Array.from({ length: TASKS }, task));
}

describe('one handle shared by concurrent tasks', { timeout: 20_000 }, () => {
  it('lock()/unlock() on a module-level handle lets one task in at a time', async () => {
    const orders = server.lockClient().getLock('shared-lock');
    const cs = section();
    await concurrently(async () => {
      await orders.lock();
      cs.enter();
      await sleep(HOLD_MS);
      cs.leave();
      await orders.unlock();
    });
    assert.equal(cs.max, 1, `${cs.max} tasks were inside the critical section at once`);
    assert.equal(await orders.isLocked(), false);
  });

  it('withLock() on a module-level handle lets one task in at a time', async () => {
    const orders = server.lockClient().getLock('shared-with-lock');
    const cs = section();
    await concurrently(() =>
      orders.withLock(async () => {
        cs.enter();
        await sleep(HOLD_MS);
        cs.leave();
      }),
    );
    assert.equal(cs.max, 1, `${cs.max} tasks were inside the critical section at once`);
    assert.equal(await orders.isLocked(), false);
  });

  it('acquire()/release() on a module-level handle lets one task in at a time', async () => {
    const orders = server.lockClient().getLock('shared-acquire');
    const cs = section();
    await concurrently(async () => {
      const lease = await orders.acquire();
      cs.enter();
      await sleep(HOLD_MS);
      cs.leave();
      await lease.release();
    });
    assert.equal(cs.max, 1, `${cs.max} tasks were inside the critical section at once`);
    assert.equal(await orders.isLocked(), false);
  });

  it('tryLock() on a shared handle fails while another task holds it', async () => {
    const orders = server.lockClient().getLock('shared-try');
    await orders.lock();
    // Another request of the same process, not nested in the holder's callback: a new owner.
    const other = await new Promise<boolean>((resolve, reject) => {
      setImmediate(() => void orders.tryLock().then(resolve, reject));
    });
    assert.equal(other, false, 'a concurrent task got a lock another task of the process holds');
    await orders.unlock();
  });

  it('inside withLock(A), two parallel withLock(B) exclude each other', async () => {
    const locks = server.lockClient();
    const a = locks.getLock('outer-a');
    const b = locks.getLock('inner-b');
    const cs = section();
    await a.withLock(async () => {
      await Promise.all(
        [0, 1].map(() =>
          b.withLock(async () => {
            cs.enter();
            await sleep(HOLD_MS);
            cs.leave();
          }),
        ),
      );
    });
    assert.equal(cs.max, 1, `${cs.max} tasks inside withLock(A) held B at once`);
    assert.equal(await b.isLocked(), false);
  });
});

describe('re-entry that must keep working', { timeout: 20_000 }, () => {
  it('withLock(A) nested inside withLock(A) re-enters', async () => {
    const locks = server.lockClient();
    const a = locks.getLock('nested-a');
    await a.withLock(async () => {
      assert.equal(await a.getHoldCount(), 1);
      await a.withLock(async () => {
        assert.equal(await a.getHoldCount(), 2);
        // Another handle of the same name re-enters too: the owner is the callback, not the handle.
        assert.equal(await locks.getLock('nested-a').getHoldCount(), 2);
      });
      assert.equal(await a.getHoldCount(), 1);
    });
    assert.equal(await a.isLocked(), false);
  });

  it('scope(): Redisson-style lock(); lock(); unlock(); unlock() on one handle', async () => {
    const locks = server.lockClient();
    const lock = locks.getLock('scoped-redisson');
    await locks.scope(async () => {
      await lock.lock();
      await lock.lock();
      assert.equal(await lock.getHoldCount(), 2);
      await lock.unlock();
      assert.equal(await lock.getHoldCount(), 1);
      assert.equal(await lock.isLocked(), true);
      await lock.unlock();
      assert.equal(await lock.getHoldCount(), 0);
    });
    assert.equal(await lock.isLocked(), false);
  });

  it('two scopes on one handle are two owners', async () => {
    const locks = server.lockClient();
    const lock = locks.getLock('two-scopes');
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const holder = locks.scope(async () => {
      await lock.lock();
      await released;
      await lock.unlock();
    });
    await sleep(50);
    const other = await locks.scope(() => lock.tryLock());
    release();
    await holder;
    assert.equal(other, false, 'a second scope got a lock the first scope holds');
  });
});
