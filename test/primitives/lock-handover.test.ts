import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { lockAcquire, lockLeave, lockRelease } from '../../src/scripts/index.js';
import { assertNoKeyWithoutTtl } from '../helpers/leftovers.js';
import { commandCalls, sleep, startServer, type TestServer } from '../helpers/redis.js';

let server: TestServer;
before(async () => {
  server = await startServer();
});

/** Resolves once `lock` is taken, recording the order of acquisitions in `order`. */
function take(lock: { lock(): Promise<void> }, label: string, order: string[]): Promise<void> {
  return lock.lock().then(() => void order.push(label));
}

describe('Lock: hand-over to waiters, no barging', () => {
  it('a process that releases and asks again queues behind the one already waiting', async () => {
    const order: string[] = [];
    const a = server.lockClient().getLock('barge');
    const b = server.lockClient().getLock('barge');
    await a.lock();
    const bWaits = take(b, 'b', order);
    await sleep(50); // b is queued
    await a.unlock();
    const aAgain = take(a, 'a', order); // asks again at once: its request needs no wake-up, b's does
    await bWaits;
    assert.equal(await a.isHeldByCurrentOwner(), false);
    await b.unlock();
    await aAgain;
    assert.deepEqual(order, ['b', 'a']);
    await a.unlock();
  });

  it('a one-shot tryLock() does not take a lock that was handed to a waiter', async () => {
    const holder = server.lockClient().getLock('no-barge-try');
    const waiter = server.lockClient().getLock('no-barge-try');
    const bystander = server.lockClient().getLock('no-barge-try');
    await holder.lock();
    const waiting = waiter.lock();
    await sleep(50);
    await holder.unlock();
    assert.equal(await bystander.tryLock(), false);
    await waiting;
    assert.equal(await waiter.getHoldCount(), 1);
    await waiter.unlock();
    assert.equal(await bystander.tryLock(), true);
    await bystander.unlock();
  });

  it('serves waiters of several processes in the order they asked', async () => {
    const order: string[] = [];
    const holder = server.lockClient().getLock('order');
    await holder.lock();
    const waits: Promise<void>[] = [];
    const handles = ['w1', 'w2', 'w3', 'w4'].map((label) => ({ label, lock: server.lockClient().getLock('order') }));
    for (const { label, lock } of handles) {
      waits.push(
        take(lock, label, order)
          .then(() => sleep(5))
          .then(() => lock.unlock()),
      );
      await sleep(30);
    }
    await holder.unlock();
    await Promise.all(waits);
    assert.deepEqual(order, ['w1', 'w2', 'w3', 'w4']);
  });

  it('a waiter that gives up passes a hand-over on and leaves no place behind', async () => {
    const holder = server.lockClient().getLock('give-up-handover');
    const quitter = server.lockClient().getLock('give-up-handover');
    const next = server.lockClient().getLock('give-up-handover');
    await holder.lock();
    const controller = new AbortController();
    const quitting = quitter.lock({ signal: controller.signal }).catch((error: unknown) => error);
    await sleep(30);
    const nextWaits = next.lock();
    await sleep(30);
    controller.abort(new Error('gave up'));
    assert.equal(((await quitting) as Error).message, 'gave up');
    await holder.unlock();
    await nextWaits;
    await next.unlock();
    const redis = server.client();
    assert.deepEqual(await redis.keys('latchkey:{give-up-handover}:*'), []);
  });

  it('a lock handed over is reserved for fairWaiterTimeout; a holder that keeps it longer claims its own lease', async () => {
    const holder = server.lockClient({ fairWaiterTimeout: 1_500 }).getLock('claim');
    const waiter = server.lockClient({ fairWaiterTimeout: 1_500 }).getLock('claim');
    await holder.lock();
    const waiting = waiter.lock(); // watchdog lease: 30 s
    await sleep(50);
    await holder.unlock();
    await waiting;
    // Handed over: the lock is kept for the new owner no longer than a dead waiter's place (1.5 s).
    assert.ok((await waiter.remainTimeToLive()) <= 1_500);
    await sleep(1_200);
    // A third of the reservation later the holder claimed its own lease, long before it ran out.
    assert.equal(await waiter.isHeldByCurrentOwner(), true);
    assert.ok((await waiter.remainTimeToLive()) > 20_000);
    await waiter.unlock();
    assert.deepEqual(await server.client().keys('latchkey:{claim}:*'), []);
  });

  it('a short hold handed over never sends a claim, and leaves nothing behind', async () => {
    const holder = server.lockClient().getLock('no-claim');
    const locks = server.lockClient();
    const waiter = locks.getLock('no-claim');
    await holder.lock();
    const waiting = waiter.lock();
    await sleep(50);
    const admin = server.client();
    await admin.config('RESETSTAT');
    await holder.unlock();
    await waiting;
    await waiter.unlock();
    await sleep(50);
    // The release that handed it over, and the release by the new holder: no claim in between.
    assert.equal((await commandCalls(admin, 'evalsha')) + (await commandCalls(admin, 'eval')), 2);
    assert.deepEqual(await admin.keys('latchkey:{no-claim}:*'), []);
  });

  it('skips a waiter whose place lapsed, and a hand-over never claimed expires by itself', async () => {
    const locks = server.lockClient({ fairWaiterTimeout: 600 });
    const holder = locks.getLock('dead-waiter');
    const waiter = server.lockClient({ fairWaiterTimeout: 600 }).getLock('dead-waiter');
    const redis = server.client();
    const keys = [
      'latchkey:{dead-waiter}:lock',
      'latchkey:{dead-waiter}:lock:queue',
      'latchkey:{dead-waiter}:lock:waiters',
    ];
    await holder.lock();
    // A waiter that queued and then died (it never refreshes its place, never reads the message).
    await redis.eval(lockAcquire.source, 3, ...keys, 'ghost:1', 300, 600, '1', 'token');
    const waiting = waiter.lock();
    await sleep(50);
    await holder.unlock(); // handed to the ghost: reserved for at most its lease (300 ms)
    const started = Date.now();
    await waiting;
    const waited = Date.now() - started;
    assert.ok(waited >= 150 && waited < 3_000, `the live waiter got the lock after ${waited} ms`);
    await waiter.unlock();
    await assertNoKeyWithoutTtl(redis);
  });

  it('the wait a lock was handed to, retrying before its message, counts one hold; another wait of that owner re-enters', async () => {
    const redis = server.client();
    const keys = ['latchkey:{race}:lock', 'latchkey:{race}:lock:queue', 'latchkey:{race}:lock:waiters'] as const;
    const run = (script: { source: string }, ...args: (string | number)[]): Promise<unknown> =>
      redis.eval(script.source, 3, ...keys, ...args);
    const channel = 'latchkey:{race}:lock:hand-over';
    assert.equal(await run(lockAcquire, 'a:1', 30_000), null);
    assert.notEqual(await run(lockAcquire, 'b:1', 30_000, 10_000, '1', 't1'), null); // queued
    assert.equal(await run(lockRelease, 'a:1', channel), 0); // handed to b's wait t1
    assert.equal(await redis.hget(keys[0], 'b:1'), '1');
    assert.equal(await redis.hexists(keys[2], 'b:1'), 0, 'its place is given up with the hand-over');
    // Wait t1 retries before the message reached it: the hold the release counted is its own.
    assert.equal(await run(lockAcquire, 'b:1', 30_000, 10_000, '1', 't1'), null);
    assert.equal(await redis.hget(keys[0], 'b:1'), '1');
    // Another wait of the same owner (t2) re-enters.
    assert.equal(await run(lockAcquire, 'b:1', 30_000, 10_000, '1', 't2'), null);
    assert.equal(await redis.hget(keys[0], 'b:1'), '2');
    // Wait t1 was served: giving up now passes nothing on.
    assert.equal(await run(lockLeave, 'b:1', channel, 't1'), 0);
    assert.equal(await run(lockRelease, 'b:1', channel), 1);
    assert.equal(await run(lockRelease, 'b:1', channel), 0);
    assert.deepEqual(await redis.keys('latchkey:{race}:*'), []);
  });

  it('a hand-over that its wait gives up before taking it is passed on; a same token of another client is not it', async () => {
    const redis = server.client();
    const keys = [
      'latchkey:{pass-on}:lock',
      'latchkey:{pass-on}:lock:queue',
      'latchkey:{pass-on}:lock:waiters',
    ] as const;
    const run = (script: { source: string }, ...args: (string | number)[]): Promise<unknown> =>
      redis.eval(script.source, 3, ...keys, ...args);
    const channel = 'latchkey:{pass-on}:lock:hand-over';
    await run(lockAcquire, 'a:1', 30_000);
    await run(lockAcquire, 'b:1', 30_000, 10_000, '1', 't1');
    await run(lockAcquire, 'c:1', 30_000, 10_000, '1', 't9');
    await run(lockRelease, 'a:1', channel); // handed to b's wait t1
    // Tokens are counted per client: another client's wait t1 is not the one the lock went to.
    assert.equal(await run(lockLeave, 'd:1', channel, 't1'), 0);
    assert.equal(await redis.hget(keys[0], 'b:1'), '1');
    assert.equal(await run(lockLeave, 'b:1', channel, 't1'), 1);
    assert.equal(await redis.hget(keys[0], 'b:1'), null);
    assert.equal(await redis.hget(keys[0], 'c:1'), '1', 'passed on to the next in the queue');
    assert.equal(await redis.hget(keys[0], 'handed-over'), 't9');
    assert.equal(await run(lockRelease, 'c:1', channel), 0);
    assert.deepEqual(await redis.keys('latchkey:{pass-on}:*'), []);
  });
});
