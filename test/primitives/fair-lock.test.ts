import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { assertNoKeyWithoutTtl, lockQueue, keysWithTtl } from '../../harness/keys.js';
import type { Redis } from 'ioredis';
import { sleep } from '../../harness/eventually.js';
import { startServer, type TestServer } from '../../harness/server.js';

let server: TestServer;
let redis: Redis;
before(async () => {
  server = await startServer();
  redis = server.client();
});

const { queueKey, waitersKey, queued, waitQueued } = lockQueue(() => redis);

describe('FairLock: request order', () => {
  it('grants 10 waiters from 3 clients in the order they queued', async () => {
    const clients = [server.lockClient(), server.lockClient(), server.lockClient()];
    const holder = clients[0]!.getFairLock('order');
    await holder.lock();
    const granted: number[] = [];
    const done: Promise<void>[] = [];
    for (let i = 0; i < 10; i++) {
      const lock = clients[i % 3]!.getFairLock('order');
      done.push(
        lock.lock().then(async () => {
          granted.push(i);
          await sleep(5);
          await lock.unlock();
        }),
      );
      await waitQueued('order', i + 1);
    }
    await holder.unlock();
    await Promise.all(done);
    assert.deepEqual(granted, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    assert.equal(await redis.exists(queueKey('order'), waitersKey('order')), 0);
  });

  it('a one-shot tryLock neither queues nor jumps the queue', async () => {
    const holder = server.lockClient().getFairLock('no-barging');
    const waiter = server.lockClient().getFairLock('no-barging');
    const other = server.lockClient().getFairLock('no-barging');
    await holder.lock();
    const waiting = waiter.lock();
    await waitQueued('no-barging', 1);
    assert.equal(await other.tryLock(), false);
    assert.equal(await queued('no-barging'), 1);
    await holder.unlock();
    await waiting;
    assert.equal(await waiter.isHeldByCurrentOwner(), true);
    await waiter.unlock();
  });

  it('is re-entrant and excludes a plain Lock of the same name', async () => {
    const locks = server.lockClient();
    const fair = locks.getFairLock('shared-name');
    await locks.scope(async () => {
      await fair.lock();
      assert.equal(await fair.tryLock(), true);
      assert.equal(await fair.getHoldCount(), 2);
      assert.equal(await server.lockClient().getLock('shared-name').tryLock(), false);
      await fair.unlock();
      await fair.unlock();
    });
    assert.equal(await fair.isLocked(), false);
  });
});

describe('FairLock: leaving the queue', () => {
  it('abort removes the queue entry at once and the next waiter moves up', async () => {
    const holder = server.lockClient().getFairLock('abort');
    const first = server.lockClient().getFairLock('abort');
    const second = server.lockClient().getFairLock('abort');
    await holder.lock();
    const controller = new AbortController();
    const aborted = first.lock({ signal: controller.signal });
    await waitQueued('abort', 1);
    const waiting = second.lock();
    await waitQueued('abort', 2);
    const reason = new Error('caller gave up');
    controller.abort(reason);
    await assert.rejects(aborted, (error) => error === reason);
    // Gone before the promise rejected: no polling needed.
    assert.deepEqual(await redis.lrange(queueKey('abort'), 0, -1), [await ownerOf(second, 'abort')]);
    await holder.unlock();
    await waiting;
    await second.unlock();
    assert.equal(await first.isLocked(), false);
  });

  it('a waitTime that elapses leaves no entry behind', async () => {
    const holder = server.lockClient().getFairLock('wait-time');
    await holder.lock();
    const started = Date.now();
    assert.equal(await server.lockClient().getFairLock('wait-time').tryLock({ waitTime: 150 }), false);
    assert.ok(Date.now() - started >= 140);
    assert.equal(await queued('wait-time'), 0);
    await holder.unlock();
  });

  it('getLock() and getFairLock() waiters of one name are served in one order', async () => {
    const holder = server.lockClient().getFairLock('one-order');
    await holder.lock();
    const granted: string[] = [];
    const handles = [
      ['plain-1', server.lockClient().getLock('one-order')],
      ['fair-1', server.lockClient().getFairLock('one-order')],
      ['plain-2', server.lockClient().getLock('one-order')],
      ['fair-2', server.lockClient().getFairLock('one-order')],
    ] as const;
    const done: Promise<void>[] = [];
    for (const [i, [label, lock]] of handles.entries()) {
      done.push(
        lock.lock().then(async () => {
          granted.push(label);
          await lock.unlock();
        }),
      );
      await waitQueued('one-order', i + 1);
    }
    await holder.unlock();
    await Promise.all(done);
    assert.deepEqual(granted, ['plain-1', 'fair-1', 'plain-2', 'fair-2']);
  });
});

describe('FairLock: keys and input', () => {
  it('leaves no key without a TTL', async () => {
    const holder = server.lockClient().getFairLock('ttl');
    await holder.lock();
    const waiting = server.lockClient().getFairLock('ttl').tryLock({ waitTime: 5_000 });
    await waitQueued('ttl', 1);
    for (const [key, ttl] of await keysWithTtl(redis, 'latchkey:{ttl}*')) assert.ok(ttl > 0, `${key} has TTL ${ttl}`);
    await holder.unlock();
    assert.equal(await waiting, true);
  });

  it('refuses bad names before reaching Redis', () => {
    const locks = server.lockClient();
    assert.throws(() => locks.getFairLock(42 as unknown as string), { name: 'TypeError', message: /`name`/ });
    assert.throws(() => locks.getFairLock(''), { name: 'RangeError', message: /`name`/ });
  });
});

/** The owner id a handle queues under (read from the queue it joined, for one waiter). */
async function ownerOf(lock: { name: string }, name: string): Promise<string> {
  const entries = await redis.lrange(queueKey(name), 0, -1);
  assert.equal(entries.length, 1, `expected one entry, got ${entries.length} (${lock.name})`);
  return entries[0]!;
}

describe('FairLock: after every test above', () => {
  it('leaves no latchkey key without a TTL', async () => {
    await assertNoKeyWithoutTtl(redis, []);
  });
});
