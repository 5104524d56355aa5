import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { RedisUnavailableError } from '../../src/index.js';
import { commandCalls, startServer, type TestServer } from '../../harness/server.js';
import { keysWithTtl, keysLeft } from '../../harness/keys.js';
import { sleep } from '../../harness/eventually.js';
import { contextOf } from '../../src/client.js';

let server: TestServer;
before(async () => {
  server = await startServer();
});

/** Settles within `ms`? (a pending promise stays pending; its outcome is kept for later) */
async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let settled = false;
  promise.then(
    () => (settled = true),
    () => (settled = true),
  );
  await sleep(ms);
  return settled;
}

describe('Semaphore: permits', () => {
  it('trySetPermits only once; acquire, release, add, drain', async () => {
    const semaphore = server.lockClient().getSemaphore('basic');
    assert.equal(await semaphore.availablePermits(), 0);
    assert.equal(await semaphore.trySetPermits(3), true);
    assert.equal(await semaphore.trySetPermits(5), false);
    assert.equal(await semaphore.availablePermits(), 3);
    await semaphore.acquire(2);
    assert.equal(await semaphore.availablePermits(), 1);
    assert.equal(await semaphore.tryAcquire({ permits: 2 }), false);
    assert.equal(await semaphore.tryAcquire(), true);
    await semaphore.release(3);
    await semaphore.addPermits(2);
    assert.equal(await semaphore.availablePermits(), 5);
    await semaphore.addPermits(-6);
    assert.equal(await semaphore.availablePermits(), -1);
    assert.equal(await semaphore.drainPermits(), 0);
    await semaphore.release(4);
    assert.equal(await semaphore.drainPermits(), 3);
    assert.equal(await semaphore.availablePermits(), 0);
  });

  it('any party may release, on any client; a waiter on another client gets the permits', async () => {
    const first = server.lockClient().getSemaphore('cross');
    const second = server.lockClient().getSemaphore('cross');
    await first.trySetPermits(2);
    await first.acquire(2);
    const waiting = second.acquire(2);
    assert.equal(await settlesWithin(waiting, 150), false);
    await server.lockClient().getSemaphore('cross').release(1);
    assert.equal(await settlesWithin(waiting, 150), false, 'one permit is not enough for a waiter for two');
    await second.release(1);
    await waiting;
    assert.equal(await first.availablePermits(), 0);
  });

  it('never lets more holders in than there are permits (12 tasks on 3 clients, mixed sizes)', async () => {
    const name = 'bounded';
    await server.lockClient().getSemaphore(name).trySetPermits(4);
    let inside = 0;
    let most = 0;
    const clients = [server.lockClient(), server.lockClient(), server.lockClient()];
    await Promise.all(
      Array.from({ length: 12 }, async (_, i) => {
        const semaphore = clients[i % 3]!.getSemaphore(name);
        const permits = (i % 2) + 1;
        for (let round = 0; round < 5; round++) {
          await semaphore.acquire(permits);
          inside += permits;
          most = Math.max(most, inside);
          await sleep(2);
          inside -= permits;
          await semaphore.release(permits);
        }
      }),
    );
    assert.ok(most <= 4 && most >= 2, `at most 4 permits out at once (${most})`);
    assert.equal(await clients[0]!.getSemaphore(name).availablePermits(), 4);
  });

  it('tryAcquire with waitTime gives up, leaving no queue entry behind', async () => {
    const semaphore = server.lockClient().getSemaphore('timeout');
    await semaphore.trySetPermits(1);
    await semaphore.acquire();
    const started = Date.now();
    assert.equal(await semaphore.tryAcquire({ permits: 1, waitTime: 200 }), false);
    assert.ok(Date.now() - started >= 190);
    assert.deepEqual(await keysLeft(server.client(), 'timeout'), [
      'latchkey:{timeout}:semaphore:grants',
      'latchkey:{timeout}:semaphore:permits',
    ]);
  });

  it('abort rejects with the reason, takes nothing and lifts the reservation at once', async () => {
    const locks = server.lockClient();
    const semaphore = locks.getSemaphore('abort');
    await semaphore.trySetPermits(2);
    const controller = new AbortController();
    const waiting = semaphore.acquire(3, { signal: controller.signal });
    await sleep(100);
    // The waiter for 3 is the queue head: a taker of 1 may not eat into its reservation.
    assert.equal(await semaphore.tryAcquire(), false);
    const reason = new Error('stop');
    controller.abort(reason);
    await assert.rejects(waiting, (error) => error === reason);
    assert.equal(await semaphore.availablePermits(), 2);
    assert.equal(await semaphore.tryAcquire(), true, 'no reservation is left behind');
    assert.equal(contextOf(locks).waiters.channelCount, 0);
  });
});

describe('Semaphore: waking and fairness', () => {
  it('a release of k permits wakes k local waiters, not all of them', async () => {
    const redis = server.client();
    const semaphore = server.lockClient().getSemaphore('wake-k');
    await semaphore.trySetPermits(0);
    const acquired: number[] = [];
    const waiters = Array.from({ length: 6 }, (_, i) => semaphore.acquire().then(() => acquired.push(i)));
    await sleep(200);
    await redis.config('RESETSTAT');
    await server.lockClient().getSemaphore('wake-k').release(2);
    await sleep(200);
    assert.equal(acquired.length, 2);
    // One release script plus one attempt per woken waiter: the other four stayed parked.
    const calls = await commandCalls(redis, 'evalsha');
    assert.ok(calls <= 3, `woken waiters only (${calls} calls)`);
    await semaphore.release(4);
    await Promise.all(waiters);
    assert.equal(acquired.length, 6);
  });

  it('a waiter for 3 permits is not starved by a stream of 1-permit takers', async () => {
    const name = 'no-starvation';
    const big = server.lockClient().getSemaphore(name);
    await big.trySetPermits(3);
    let stop = false;
    let small = 0;
    // Four takers on two other clients keep at least one permit busy at almost every moment.
    const takers = [server.lockClient(), server.lockClient()].flatMap((locks) =>
      [0, 1].map(async () => {
        const semaphore = locks.getSemaphore(name);
        while (!stop) {
          await semaphore.acquire(1);
          small++;
          await sleep(5);
          await semaphore.release(1);
        }
      }),
    );
    await sleep(150);
    const started = Date.now();
    assert.equal(await big.tryAcquire({ permits: 3, waitTime: 5_000 }), true);
    const waited = Date.now() - started;
    stop = true;
    const smallWhileHeld = small;
    await sleep(50);
    assert.equal(small, smallWhileHeld, 'nobody else holds a permit while the big waiter holds all 3');
    await big.release(3);
    await Promise.all(takers);
    assert.ok(small > 10, `the small takers ran (${small})`);
    assert.ok(waited < 5_000, `big waiter served in ${waited} ms`);
    assert.equal(await big.availablePermits(), 3);
  });

  it('a queued waiter whose client vanished is skipped after fairWaiterTimeout', async () => {
    const redis = server.client();
    const gone = new (await import('../../src/index.js')).LockClient(redis, { fairWaiterTimeout: 600 });
    const semaphore = server.lockClient().getSemaphore('vanished');
    await semaphore.trySetPermits(1);
    const waiting = gone.getSemaphore('vanished').acquire(2);
    waiting.catch(() => undefined);
    await sleep(100);
    redis.disconnect(); // the waiter can neither refresh nor leave its entry
    assert.equal(await semaphore.tryAcquire(), false, 'blocked by the head reservation');
    const started = Date.now();
    assert.equal(await semaphore.tryAcquire({ waitTime: 5_000 }), true, 'the stale head is skipped');
    assert.ok(Date.now() - started < 2_500, 'retried when the stale entry ran out, not at the deadline');
    assert.equal(await semaphore.availablePermits(), 0, 'the vanished waiter took nothing');
    await semaphore.release();
    assert.equal(await semaphore.availablePermits(), 1);
    await gone.shutdown();
  });
});

describe('Semaphore: failures and bad input', () => {
  it('a frozen server fails the call in time and the permits are given back', async () => {
    const own = await startServer();
    const semaphore = own.lockClient({ commandTimeout: 300 }).getSemaphore('frozen');
    await semaphore.trySetPermits(3);
    own.freeze();
    try {
      await assert.rejects(semaphore.acquire(2), RedisUnavailableError);
    } finally {
      own.resume();
    }
    await sleep(200);
    // The acquire ran after the resume, then its undo: nothing lost, nothing duplicated.
    assert.equal(await semaphore.availablePermits(), 3);
    assert.equal(await semaphore.tryAcquire({ permits: 3 }), true);
    assert.equal(await semaphore.availablePermits(), 0);
  });

  it('refuses bad input before anything reaches Redis', async () => {
    const redis = server.client();
    const locks = server.lockClient();
    const semaphore = locks.getSemaphore('bad-input');
    await redis.config('RESETSTAT');
    await assert.rejects(semaphore.acquire(0), { name: 'RangeError', message: /`permits`/ });
    await assert.rejects(semaphore.acquire(1.5), { name: 'RangeError', message: /`permits`/ });
    await assert.rejects(semaphore.acquire('2' as unknown as number), { name: 'TypeError', message: /`permits`/ });
    await assert.rejects(semaphore.tryAcquire({ permits: -1 }), { name: 'RangeError', message: /`permits`/ });
    await assert.rejects(semaphore.tryAcquire({ waitTime: Number.NaN }), { name: 'RangeError', message: /`waitTime`/ });
    await assert.rejects(semaphore.acquire(1, { signal: 'x' as unknown as AbortSignal }), {
      name: 'TypeError',
      message: /`signal`/,
    });
    await assert.rejects(semaphore.release(0), { name: 'RangeError', message: /`permits`/ });
    await assert.rejects(semaphore.trySetPermits(-1), { name: 'RangeError', message: /`permits`/ });
    await assert.rejects(semaphore.addPermits(0.5), { name: 'RangeError', message: /`permits`/ });
    assert.throws(() => locks.getSemaphore(''), { name: 'RangeError', message: /`name`/ });
    assert.throws(() => locks.getSemaphore(7 as unknown as string), { name: 'TypeError', message: /`name`/ });
    assert.equal((await commandCalls(redis, 'evalsha')) + (await commandCalls(redis, 'eval')), 0);
  });

  it('keeps only the permit count without TTL', async () => {
    const redis = server.client();
    const semaphore = server.lockClient().getSemaphore('ttl');
    await semaphore.trySetPermits(1);
    await semaphore.acquire();
    const waiting = semaphore.acquire();
    await sleep(50);
    await semaphore.release();
    await waiting;
    for (const [key, ttl] of await keysWithTtl(redis, 'latchkey:{ttl}:*')) {
      if (key.endsWith(':semaphore:permits')) assert.equal(ttl, -1);
      else assert.ok(ttl > 0, `${key} expires`);
    }
  });
});
