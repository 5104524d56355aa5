import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { lockAcquire, lockLeave, lockReenter, lockRelease } from '../../src/scripts/index.js';
import { contextOf } from '../../src/client.js';
import { assertNoKeyWithoutTtl, keysLeft as lockKeysLeft, lockQueue } from '../../harness/keys.js';
import type { Redis } from 'ioredis';
import { commandCalls, startServer, type TestServer } from '../../harness/server.js';
import { eventually, sleep } from '../../harness/eventually.js';

/** The lock hash, queue and waiters keys of lock `name`. */
const lockKeys = (name: string): [string, string, string] => [
  `latchkey:{${name}}:lock`,
  `latchkey:{${name}}:lock:queue`,
  `latchkey:{${name}}:lock:waiters`,
];

let server: TestServer;
let redis: Redis;
before(async () => {
  server = await startServer();
  redis = server.client();
});

// Waiters are awaited in the queue, not for a fixed pause: on a loaded machine a waiter not yet
// queued when the lock is released takes it directly, and a test built on a hand-over then fails
// or, where the releaser asks again at once, waits forever.
const { waitQueued } = lockQueue(() => redis);

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
    await waitQueued('barge', 1);
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
    await waitQueued('no-barge-try', 1);
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
    const admin = server.client();
    const holder = server.lockClient().getLock('order');
    await holder.lock();
    const waits: Promise<void>[] = [];
    const handles = ['w1', 'w2', 'w3', 'w4'].map((label) => ({ label, lock: server.lockClient().getLock('order') }));
    for (const [i, { label, lock }] of handles.entries()) {
      waits.push(
        take(lock, label, order)
          .then(() => sleep(5))
          .then(() => lock.unlock()),
      );
      // Asked: queued in Redis (each client connects first, at its own pace).
      await eventually(async () => (await admin.llen(lockKeys('order')[1])) === i + 1, 5_000, `${label} queued`);
    }
    await holder.unlock();
    await Promise.all(waits);
    assert.deepEqual(order, ['w1', 'w2', 'w3', 'w4']);
  });

  it('a hand-over whose queued attempt is old is confirmed by a round trip, not held on a few ms of proof', async () => {
    // The waiter's lease is 750 ms. Its place was written once, when it queued (refreshed only
    // every fairWaiterTimeout / 3); the hand-over comes 690 ms later. Its message proves the lock
    // only until that attempt's send time plus the reservation, some 60 ms away: a process
    // that then stalls for longer (here: 200 ms of synchronous work) would be told its lock was
    // lost while Redis still holds it for it.
    const holder = server.lockClient().getLock('old-ticket');
    const waiter = server.lockClient({ watchdogTimeout: 750 }).getLock('old-ticket');
    await holder.lock();
    const waiting = waiter.acquire();
    await sleep(690);
    await holder.unlock();
    const lease = await waiting;
    const busyUntil = Date.now() + 200;
    while (Date.now() < busyUntil); // a stall of the event loop
    await sleep(100); // the timers the stall held back run now
    assert.equal(lease.signal.aborted, false, `a false loss: ${String(lease.signal.reason)}`);
    await lease.release();
  });

  it('a waiter that gives up passes a hand-over on and leaves no place behind', async () => {
    const holder = server.lockClient().getLock('give-up-handover');
    const quitter = server.lockClient().getLock('give-up-handover');
    const next = server.lockClient().getLock('give-up-handover');
    await holder.lock();
    const controller = new AbortController();
    const quitting = quitter.lock({ signal: controller.signal }).catch((error: unknown) => error);
    await waitQueued('give-up-handover', 1);
    const nextWaits = next.lock();
    await waitQueued('give-up-handover', 2);
    controller.abort(new Error('gave up'));
    assert.equal(((await quitting) as Error).message, 'gave up');
    await holder.unlock();
    await nextWaits;
    await next.unlock();
    assert.deepEqual(await lockKeysLeft(server.client(), 'give-up-handover'), []);
  });

  it('a lock handed over is reserved for fairWaiterTimeout; a holder that keeps it longer claims its own lease', async () => {
    const holder = server.lockClient({ fairWaiterTimeout: 1_500 }).getLock('claim');
    const waiter = server.lockClient({ fairWaiterTimeout: 1_500 }).getLock('claim');
    await holder.lock();
    const waiting = waiter.lock(); // watchdog lease: 30 s
    await waitQueued('claim', 1);
    await holder.unlock();
    await waiting;
    // Handed over: the lock is kept for the new owner no longer than a dead waiter's place (1.5 s).
    assert.ok((await waiter.remainTimeToLive()) <= 1_500);
    await sleep(1_200);
    // A third of the reservation later the holder claimed its own lease, long before it ran out.
    assert.equal(await waiter.isHeldByCurrentOwner(), true);
    assert.ok((await waiter.remainTimeToLive()) > 20_000);
    await waiter.unlock();
    assert.deepEqual(await lockKeysLeft(server.client(), 'claim'), []);
  });

  it('a fixed lease is renewed only when a hand-over proved less of it, and never past its end', async () => {
    // Reservation 1.5 s: the first renewal is due about 0.5 s after the hand-over.
    const options = { fairWaiterTimeout: 1_500 };
    const holderClient = server.lockClient(options);
    const waiterClient = server.lockClient(options);
    const holder = holderClient.getLock('fixed-lease');
    const waiter = waiterClient.getLock('fixed-lease');
    // Taken directly, a fixed lease is proven to its end by the grant: nothing to renew.
    await holder.lock({ leaseTime: 60_000 });
    assert.equal(contextOf(holderClient).watchdog.size, 0);
    const waiting = waiter.lock({ leaseTime: 4_000 });
    await waitQueued('fixed-lease', 1);
    await holder.unlock();
    await waiting;
    // Handed over for the reservation only: the watchdog extends it towards the lease's end.
    assert.equal(contextOf(waiterClient).watchdog.size, 1);
    assert.ok((await waiter.remainTimeToLive()) <= 1_500);
    await eventually(async () => (await waiter.remainTimeToLive()) > 1_500, 3_000, 'extended past the reservation');
    // ... but not past the 4 s it asked for: it expires by itself, and nothing renews it after.
    assert.ok((await waiter.remainTimeToLive()) <= 4_000);
    await eventually(() => contextOf(waiterClient).watchdog.size === 0, 5_000, 'renewed to its end');
    await eventually(async () => !(await waiter.isLocked()), 5_000, 'expired at its lease end');
  });

  it('a short hold handed over never sends a claim, and leaves nothing behind', async () => {
    // Counted are the lock's own scripts. With push loss detection, a hold that lives past 50 ms
    // is also read once on the tracking connection (see LossWatch): a stall of a loaded machine
    // would add that read to the count, so these clients detect loss by renewal.
    const options = { lossDetection: 'renewal' } as const;
    const holder = server.lockClient(options).getLock('no-claim');
    const waiter = server.lockClient(options).getLock('no-claim');
    await holder.lock();
    const waiting = waiter.lock();
    await waitQueued('no-claim', 1);
    const admin = server.client();
    await admin.config('RESETSTAT');
    await holder.unlock();
    await waiting;
    await sleep(80); // a short hold, as a stalled machine makes it: still no claim
    await waiter.unlock();
    await sleep(50);
    // The release that handed it over, and the release by the new holder: no claim in between.
    assert.equal((await commandCalls(admin, 'evalsha')) + (await commandCalls(admin, 'eval')), 2);
    assert.deepEqual(await lockKeysLeft(admin, 'no-claim'), []);
  });

  it('skips a waiter whose place lapsed, and a hand-over never claimed expires by itself', async () => {
    const locks = server.lockClient({ fairWaiterTimeout: 600 });
    const holder = locks.getLock('dead-waiter');
    const waiter = server.lockClient({ fairWaiterTimeout: 600 }).getLock('dead-waiter');
    await holder.lock();
    // A waiter that queued and then died (it never refreshes its place, never reads the message):
    // lease 300 ms, place kept 600 ms, reservation 300 ms, wait "w", ticket "1".
    await redis.eval(lockAcquire.source, 1, lockKeys('dead-waiter')[0], 'ghost:1', 300, 600, 300, 'w', '1');
    const waiting = waiter.lock();
    await waitQueued('dead-waiter', 2);
    await holder.unlock(); // handed to the ghost: reserved for at most its lease (300 ms)
    const started = Date.now();
    await waiting;
    const waited = Date.now() - started;
    assert.ok(waited >= 150 && waited < 3_000, `the live waiter got the lock after ${waited} ms`);
    await waiter.unlock();
    await assertNoKeyWithoutTtl(redis);
  });

  it('the scripts are safe to repeat: an acquisition, a re-entry and a release sent twice count once', async () => {
    const keys = lockKeys('repeat');
    const marker = (owner: string, hold: string): string => `latchkey:{repeat}:lock:released:${owner}:${hold}`;
    const run = (script: { source: string }, ...args: (string | number)[]): Promise<unknown> =>
      redis.eval(script.source, 1, keys[0], ...args);
    assert.equal(await run(lockAcquire, 'a:1', 30_000), null);
    assert.equal(await run(lockAcquire, 'a:1', 30_000), null, 'the same acquisition again');
    assert.equal(await redis.hget(keys[0], 'a:1'), '1');
    assert.equal(await redis.eval(lockReenter.source, 1, keys[0], 'a:1', 1, 30_000), 1);
    assert.equal(await redis.eval(lockReenter.source, 1, keys[0], 'a:1', 1, 30_000), 1, 'the same re-entry again');
    assert.equal(await redis.hget(keys[0], 'a:1'), '2');
    assert.equal(await run(lockRelease, 'a:1', 2, 1_000, 'hold-1'), 1);
    assert.equal(await run(lockRelease, 'a:1', 2, 1_000, 'hold-1'), 1, 'the same release again');
    assert.equal(await run(lockRelease, 'a:1', 1, 1_000, 'hold-1'), 0);
    assert.equal(await run(lockRelease, 'a:1', 1, 1_000, 'hold-1'), 0, 'reported, not "not held"');
    assert.equal(await run(lockRelease, 'a:1', 1, 1_000, 'hold-2'), -1, 'another hold of the same owner');
    assert.equal(await run(lockRelease, 'b:1', 1, 1_000, 'hold-1'), -1, 'an owner that never held it');
    assert.equal(await redis.exists(keys[0]), 0);
    assert.ok((await redis.pttl(marker('a:1', 'hold-1'))) > 0, 'the marker expires');
    // A marker that may keep the lease the lock had left ("") keeps it.
    assert.equal(await run(lockAcquire, 'c:1', 30_000), null);
    assert.equal(await run(lockRelease, 'c:1', 1, '', 'hold-3'), 0);
    const kept = await redis.pttl(marker('c:1', 'hold-3'));
    assert.ok(kept > 25_000 && kept <= 30_000, `the marker keeps the lease left: ${kept} ms`);
    assert.equal(await run(lockRelease, 'c:1', 1, '', 'hold-3'), 0, 'reported, not "not held"');
  });

  it('a hand-over names the wait and the ticket of the attempt that queued it; a wait that gives up passes it on', async () => {
    const keys = lockKeys('pass-on');
    const run = (script: { source: string }, ...args: (string | number)[]): Promise<unknown> =>
      redis.eval(script.source, 1, keys[0], ...args);
    const prefix = 'latchkey:{pass-on}:lock:hand-over';
    const subscriber = server.client();
    const messages: string[] = [];
    subscriber.on('smessage', (channel: string, message: string) =>
      messages.push(`${channel.slice(prefix.length)} ${message}`),
    );
    await subscriber.ssubscribe(`${prefix}:b`, `${prefix}:c`);
    await run(lockAcquire, 'a:1', 30_000);
    await run(lockAcquire, 'b:1', 30_000, 10_000, 5_000, 'w1', '2');
    await run(lockAcquire, 'c:1', 30_000, 10_000, 5_000, 'w9', '3');
    await run(lockRelease, 'a:1', 1, 1_000, 'hold-1'); // to b
    assert.equal(await redis.hget(keys[0], 'b:1'), '1');
    const ttl = await redis.pttl(keys[0]);
    assert.ok(ttl > 0 && ttl <= 5_000, `reserved for its reservation, not its lease: ${ttl}`);
    // b's wait gives up before taking it: it passes the lock on to c.
    assert.equal(await run(lockLeave, 'b:1'), 1);
    assert.equal(await redis.hget(keys[0], 'b:1'), null);
    assert.equal(await redis.hget(keys[0], 'c:1'), '1', 'passed on to the next in the queue');
    assert.equal(await run(lockLeave, 'b:1'), 0, 'giving up again passes nothing on');
    await eventually(() => messages.length === 2, 2_000, 'two hand-overs');
    assert.deepEqual(messages, [':b =w1|2', ':c =w9|3']);
    await run(lockRelease, 'c:1', 1, 1_000, 'hold-1');
    assert.deepEqual(await lockKeysLeft(redis, 'pass-on'), []);
  });

  // A lock that frees without a release (its key expired or was deleted behind the holder) wakes
  // nobody: a queued waiter comes back at its own time, up to a third of fairWaiterTimeout (a
  // waiter told to wait for the head's place). Whoever next touches the lock for an owner that
  // holds nothing, the lost holder's release or a waiter that gives up, hands the free lock on.
  it("a lost holder's release hands the freed lock to the next waiter at once", async () => {
    const options = { fairWaiterTimeout: 30_000, lossDetection: 'renewal' } as const;
    const holder = server.lockClient(options).getLock('freed-by-loss');
    const waiter = server.lockClient(options).getLock('freed-by-loss');
    await holder.lock();
    const waiting = waiter.lock();
    await waitQueued('freed-by-loss', 1);
    await redis.del(lockKeys('freed-by-loss')[0]); // behind the holder: no release, no message
    const started = Date.now();
    await assert.rejects(holder.unlock(), { name: 'LockLostError' });
    await waiting;
    const waited = Date.now() - started;
    // Without the hand-over the waiter comes back after its refresh period, 10 s here.
    assert.ok(waited < 3_000, `the waiter got the freed lock after ${waited} ms`);
    await waiter.unlock();
    assert.deepEqual(await lockKeysLeft(redis, 'freed-by-loss'), []);
  });

  it('a waiter that gives up while the lock is free hands it to the next one at once', async () => {
    const options = { fairWaiterTimeout: 30_000, lossDetection: 'renewal' } as const;
    const holder = server.lockClient(options).getLock('freed-then-left');
    const first = server.lockClient(options).getLock('freed-then-left');
    const second = server.lockClient(options).getLock('freed-then-left');
    await holder.lock();
    const controller = new AbortController();
    const firstWaiting = first.lock({ signal: controller.signal });
    await waitQueued('freed-then-left', 1);
    const secondWaiting = second.lock();
    await waitQueued('freed-then-left', 2);
    await redis.del(lockKeys('freed-then-left')[0]); // free now, and both waiters parked
    const started = Date.now();
    controller.abort(new Error('gave up'));
    await assert.rejects(firstWaiting, /gave up/);
    await secondWaiting;
    const waited = Date.now() - started;
    assert.ok(waited < 3_000, `the next waiter got the freed lock after ${waited} ms`);
    await second.unlock();
    await assert.rejects(holder.unlock(), { name: 'LockLostError' });
    assert.deepEqual(await lockKeysLeft(redis, 'freed-then-left'), []);
  });
});
