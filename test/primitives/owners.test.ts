/**
 * The owner rules, one test per row of the table in docs/guarantees.md ("Who owns a hold"): who an
 * acquisition acquires as decides whether it re-enters a hold or waits for it.
 */
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import type { LockClient } from '../../src/index.js';
import { sleep } from '../../harness/eventually.js';
import { startServer, type TestServer } from '../../harness/server.js';

let server: TestServer;
let locks: LockClient;
before(async () => {
  server = await startServer();
  locks = server.lockClient();
});

let unique = 0;
const fresh = (): string => `owners-${++unique}`;

/** True when `take` is still waiting after 150 ms (it waits for another owner's hold). */
async function waits(take: Promise<unknown>): Promise<boolean> {
  const settled = await Promise.race([take.then(() => true), sleep(150).then(() => false)]);
  return !settled;
}

describe('owner rules', () => {
  it('1. every acquisition outside a callback or scope is a new owner: two lock() on one handle exclude', async () => {
    const lock = locks.getLock(fresh());
    await lock.lock();
    const second = lock.lock();
    assert.equal(await waits(second), true);
    await lock.unlock(); // the first: unlock() releases this handle's latest acquisition first...
    await second; // ...so the second, which waited, now holds it
    await lock.unlock();
    assert.equal(await lock.isLocked(), false);
  });

  it("2. inside withLock(A)'s callback, A re-enters as its holder, through any handle", async () => {
    const name = fresh();
    const holds = await locks.getLock(name).withLock(async () => {
      assert.equal(await locks.getLock(name).tryLock(), true);
      const count = await locks.getLock(name).getHoldCount();
      await locks.getLock(name).unlock();
      return count;
    });
    assert.equal(holds, 2);
  });

  it("3. a scope() opened inside withLock(A)'s callback re-enters A as its holder", async () => {
    const name = fresh();
    const lock = locks.getLock(name);
    const inner = await lock.withLock(() =>
      locks.scope(async () => {
        const entered = await lock.tryLock();
        const count = await lock.getHoldCount();
        await lock.unlock();
        return { entered, count };
      }),
    );
    assert.deepEqual(inner, { entered: true, count: 2 });
    assert.equal(await lock.isLocked(), false);
  });

  it("4. inside withLock(A)'s callback, another lock B is a new owner per task: parallel tasks exclude", async () => {
    const b = fresh();
    let inside = 0;
    let most = 0;
    await locks.getLock(fresh()).withLock(() =>
      Promise.all(
        [1, 2, 3].map(() =>
          locks.getLock(b).withLock(async () => {
            most = Math.max(most, ++inside);
            await sleep(20);
            inside--;
          }),
        ),
      ),
    );
    assert.equal(most, 1);
  });

  it('5. inside scope(), every lock re-enters for the scope: lock(); lock(); unlock(); unlock() on one handle', async () => {
    const lock = locks.getLock(fresh());
    await locks.scope(async () => {
      await lock.lock();
      await lock.lock();
      assert.equal(await lock.getHoldCount(), 2);
      await lock.unlock();
      await lock.unlock();
    });
    assert.equal(await lock.isLocked(), false);
  });

  it('6. a scope nested in a scope keeps the outer owner; two scopes side by side are two owners', async () => {
    const name = fresh();
    await locks.scope(async () => {
      await locks.getLock(name).lock();
      assert.equal(await locks.scope(() => locks.getLock(name).tryLock()), true);
      assert.equal(await locks.getLock(name).getHoldCount(), 2);
      await locks.getLock(name).unlock();
      await locks.getLock(name).unlock();
    });
    const first = locks.scope(() => locks.getLock(name).withLock(() => sleep(200)));
    await sleep(50);
    assert.equal(await locks.scope(() => locks.getLock(name).tryLock()), false);
    await first;
  });

  it('7. isHeldByCurrentOwner() outside a callback or scope answers for the latest acquisition of this handle, acquire() included', async () => {
    const lock = locks.getLock(fresh());
    const lease = await lock.acquire();
    assert.equal(await lock.isHeldByCurrentOwner(), true);
    assert.equal(await lock.getHoldCount(), 1);
    await lease.release();
    assert.equal(await lock.isHeldByCurrentOwner(), false);
    await lock.lock();
    assert.equal(await lock.isHeldByCurrentOwner(), true);
    await lock.unlock();
    assert.equal(await lock.isHeldByCurrentOwner(), false);
  });

  it("8. unlock() outside a callback or scope releases this handle's lock(), never an acquire() lease", async () => {
    const lock = locks.getLock(fresh());
    const lease = await lock.acquire();
    await assert.rejects(lock.unlock(), { name: 'LockNotHeldError' });
    assert.equal(lease.signal.aborted, false);
    assert.equal(await lock.isLocked(), true);
    await lease.release();
  });
});
