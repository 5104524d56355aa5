import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { assertNoKeyWithoutTtl } from '../../harness/keys.js';
import { commandCalls, startServer, type TestServer } from '../../harness/server.js';
import { eventually, sleep } from '../../harness/eventually.js';
import { contextOf } from '../../src/client.js';

let server: TestServer;
before(async () => {
  server = await startServer();
});

async function subscribers(channel: string): Promise<number> {
  const reply = (await server.client().pubsub('SHARDNUMSUB', channel)) as [string, number];
  return Number(reply[1]);
}

describe('Lock: event-driven waiting', () => {
  it('a waiter is woken by the release long before the lease would end', async () => {
    const holder = server.lockClient().getLock('wake');
    const waiter = server.lockClient().getLock('wake');
    await holder.lock({ leaseTime: 20_000 });
    let acquiredAt = 0;
    const waiting = waiter.lock().then(() => (acquiredAt = Date.now()));
    await sleep(100);
    const releasedAt = Date.now();
    await holder.unlock();
    await waiting;
    assert.ok(acquiredAt - releasedAt < 2_000, `woken ${acquiredAt - releasedAt} ms after release (lease was 20 s)`);
    await waiter.unlock();
  });

  it('retries when the holder lease runs out, even with no release message', async () => {
    const holder = server.lockClient().getLock('ttl-fallback');
    const waiter = server.lockClient().getLock('ttl-fallback');
    // The lock just expires: nobody publishes a release, so only the TTL can wake the waiter.
    await holder.lock({ leaseTime: 400 });
    const started = Date.now();
    assert.equal(await waiter.tryLock({ waitTime: 5_000 }), true);
    const waited = Date.now() - started;
    assert.ok(waited >= 250 && waited < 2_500, `acquired after ${waited} ms`);
    await waiter.unlock();
  });

  it('one release wakes one local waiter, not all of them', async () => {
    const holder = server.lockClient().getLock('herd');
    const locks = server.lockClient();
    await holder.lock();
    const handles = Array.from({ length: 6 }, () => locks.getLock('herd'));
    const order: number[] = [];
    const waits = handles.map((handle, i) => handle.lock().then(() => order.push(i)));
    await sleep(200);
    const admin = server.client();
    await admin.config('RESETSTAT');
    await holder.unlock();
    await eventually(() => order.length > 0, 10_000, 'a waiter woken', { every: 5 });
    await sleep(100);
    // One release script, then one acquire attempt by the single woken waiter.
    const scriptCalls = (await commandCalls(admin, 'evalsha')) + (await commandCalls(admin, 'eval'));
    assert.ok(scriptCalls <= 3, `${scriptCalls} script calls after one release`);
    assert.equal(order.length, 1);
    for (let released = 1; released < handles.length; released++) {
      await handles[order[released - 1]!]!.unlock();
      while (order.length === released) await sleep(5);
    }
    await handles[order.at(-1)!]!.unlock();
    await Promise.all(waits);
    assert.deepEqual(order, [0, 1, 2, 3, 4, 5], 'local waiters are woken in arrival order');
  });
});

describe('Lock: waitTime and abort leave nothing behind', () => {
  it('tryLock with waitTime gives up in time and leaves no subscription', async () => {
    const holder = server.lockClient().getLock('give-up');
    const locks = server.lockClient();
    await holder.lock();
    const started = Date.now();
    assert.equal(await locks.getLock('give-up').tryLock({ waitTime: 300 }), false);
    const waited = Date.now() - started;
    assert.ok(waited >= 280 && waited < 2_000, `gave up after ${waited} ms`);
    const handOvers = `latchkey:{give-up}:lock:hand-over:${locks.id}`;
    await eventually(async () => (await subscribers(handOvers)) === 0, 2_000, 'unsubscribed');
    assert.equal(contextOf(locks).waiters.channelCount, 0);
    await holder.unlock();
  });

  it('waits one after the other share one subscription, dropped a moment after the last', async () => {
    const holder = server.lockClient().getLock('linger');
    const locks = server.lockClient();
    const admin = server.client();
    await holder.lock();
    const handOvers = `latchkey:{linger}:lock:hand-over:${locks.id}`;
    const before = await commandCalls(admin, 'ssubscribe');
    // Longer than the linger (250 ms), so that its first timer fires while waits still come and go.
    const started = Date.now();
    let waits = 0;
    while (Date.now() - started < 600) {
      assert.equal(await locks.getLock('linger').tryLock({ waitTime: 5 }), false);
      waits++;
    }
    assert.ok(waits > 5, `${waits} waits`);
    assert.equal((await commandCalls(admin, 'ssubscribe')) - before, 1, 'one SSUBSCRIBE for every wait');
    await eventually(async () => (await subscribers(handOvers)) === 0, 3_000, 'unsubscribed after the last wait');
    assert.equal(contextOf(locks).waiters.channelCount, 0);
    await holder.unlock();
  });

  it('a client already listening for the lock queues at its first attempt', async () => {
    // Renewal-only loss detection: the holder sends no script of its own while the waits run.
    const holder = server.lockClient({ lossDetection: 'renewal' }).getLock('listening');
    const locks = server.lockClient();
    const admin = server.client();
    const queue = 'latchkey:{listening}:lock:queue';
    await holder.lock();
    // A wait of this client keeps it subscribed to the lock's hand-overs (as a wait that just
    // ended would, for the linger); parked, it sends nothing until its place needs a refresh.
    const first = locks.getLock('listening');
    const firstWaiting = first.lock();
    await eventually(async () => (await admin.llen(queue)) === 1, 2_000, 'the first wait queued');
    await admin.config('RESETSTAT');
    const second = locks.getLock('listening');
    const secondWaiting = second.lock();
    await eventually(async () => (await admin.llen(queue)) === 2, 2_000, 'the second wait queued');
    await sleep(100);
    // A plain try first would make two.
    assert.equal(await commandCalls(admin, 'evalsha'), 1, 'one attempt, and it queued');
    await holder.unlock();
    await firstWaiting;
    await first.unlock();
    await secondWaiting;
    await second.unlock();
  });

  it('abort while waiting rejects with the reason and leaves no waiter, subscription or hold', async () => {
    const holder = server.lockClient().getLock('abort');
    const locks = server.lockClient();
    await holder.lock();
    const controller = new AbortController();
    const waiting = locks.getLock('abort').lock({ signal: controller.signal });
    await sleep(100);
    // A waiter listens on its client's own hand-over channel of the lock only.
    const handOvers = `latchkey:{abort}:lock:hand-over:${locks.id}`;
    assert.equal(await subscribers(handOvers), 1);
    assert.equal(await subscribers('latchkey:{abort}:lock:hand-over'), 0);
    const reason = new Error('user gave up');
    controller.abort(reason);
    await assert.rejects(waiting, (error) => error === reason);
    await eventually(async () => (await subscribers(handOvers)) === 0, 2_000, 'unsubscribed');
    assert.equal(contextOf(locks).waiters.channelCount, 0);
    assert.equal(contextOf(locks).holds.size, 0);
    // The release after the abort reaches nobody and the holder still owns the lock until then.
    assert.equal(await holder.isHeldByCurrentOwner(), true);
    await holder.unlock();
    assert.equal(await holder.isLocked(), false);
  });

  it('an already aborted signal sends nothing to Redis', async () => {
    const admin = server.client();
    const lock = server.lockClient().getLock('pre-aborted');
    await admin.config('RESETSTAT');
    await assert.rejects(lock.lock({ signal: AbortSignal.abort(new Error('no')) }), /no/);
    assert.equal(await commandCalls(admin, 'evalsha'), 0);
  });

  it('a waiter that passes on a wake-up it could not use keeps the queue moving', async () => {
    const holder = server.lockClient().getLock('pass-on');
    const locks = server.lockClient();
    await holder.lock();
    const controller = new AbortController();
    const first = locks
      .getLock('pass-on')
      .lock({ signal: controller.signal })
      .catch((error: unknown) => error);
    const second = locks.getLock('pass-on');
    const secondWaits = second.lock();
    await sleep(100);
    controller.abort(new Error('first leaves'));
    await holder.unlock();
    const started = Date.now();
    await secondWaits;
    assert.ok(Date.now() - started < 2_000);
    assert.ok((await first) instanceof Error);
    await second.unlock();
  });

  it('many waits in flight on one client add no listener past what Node warns of', async () => {
    const warnings: Error[] = [];
    const onWarning = (warning: Error): void => void warnings.push(warning);
    process.on('warning', onWarning);
    try {
      const locks = server.lockClient();
      const holders = server.lockClient();
      const names = Array.from({ length: 30 }, (_, i) => `crowd-${i}`);
      for (const name of names) await holders.getLock(name).lock({ leaseTime: 10_000 });
      // Each name's first waiter subscribes; a spin lock's waiters sleep between tries.
      const waits = names.flatMap((name) => [
        locks.getLock(name).tryLock({ waitTime: 300 }),
        locks.getSpinLock(name).tryLock({ waitTime: 300 }),
      ]);
      assert.deepEqual(new Set(await Promise.all(waits)), new Set([false]));
      await sleep(50);
      assert.deepEqual(
        warnings.map((warning) => warning.message),
        [],
      );
    } finally {
      process.off('warning', onWarning);
    }
  });
});

describe('after these tests', () => {
  it('no latchkey key is left without a TTL', async () => {
    await assertNoKeyWithoutTtl(server.client());
  });
});
