import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { assertNoKeyWithoutTtl, keysLeft } from '../../harness/keys.js';
import type { Redis } from 'ioredis';
import { LatchkeyError, LockNotHeldError, RedisUnavailableError, SPIN_BACKOFF_DEFAULTS } from '../../src/index.js';
import { backoffDelay, resolveBackoff } from '../../src/primitives/spin-lock.js';
import { eventually, sleep } from '../../harness/eventually.js';
import { commandCalls, startServer, type TestServer } from '../../harness/server.js';
import { contextOf } from '../../src/client.js';

let server: TestServer;
let redis: Redis;
before(async () => {
  server = await startServer();
  redis = server.client();
});

const scriptCalls = async (): Promise<number> =>
  (await commandCalls(redis, 'evalsha')) + (await commandCalls(redis, 'eval'));

describe('SpinLock: the Lock API', () => {
  it('excludes across two clients and re-enters for its owner', async () => {
    const locksA = server.lockClient();
    const a = locksA.getSpinLock('basic');
    const b = server.lockClient().getSpinLock('basic');
    await locksA.scope(async () => {
      await a.lock();
      assert.equal(await a.tryLock(), true);
      assert.equal(await a.getHoldCount(), 2);
      assert.equal(await b.tryLock(), false);
      assert.equal(await b.tryLock({ waitTime: 60 }), false);
      await assert.rejects(b.unlock(), LockNotHeldError);
      await a.unlock();
      assert.equal(await a.isLocked(), true);
      await a.unlock();
    });
    assert.equal(await b.tryLock(), true);
    await b.unlock();
    assert.equal(await b.remainTimeToLive(), -2);
  });

  it('is the same lock as getLock() of that name', async () => {
    const spin = server.lockClient().getSpinLock('same-key');
    const plain = server.lockClient().getLock('same-key');
    await plain.lock();
    assert.equal(await spin.tryLock(), false);
    const waiting = spin.lock();
    await sleep(50);
    await plain.unlock();
    await waiting;
    assert.equal(await plain.tryLock(), false);
    await spin.unlock();
  });

  it('never lets two holders overlap: 3 clients x 5 tasks x 4 rounds', async () => {
    const clients = [server.lockClient(), server.lockClient(), server.lockClient()];
    const backoff = { initialDelay: 1, maxDelay: 20 };
    let inside = 0;
    let maxInside = 0;
    let rounds = 0;
    const task = async (client: (typeof clients)[number]): Promise<void> => {
      const lock = client.getSpinLock('overlap', backoff);
      for (let i = 0; i < 4; i++) {
        await lock.withLock(async () => {
          maxInside = Math.max(maxInside, ++inside);
          await sleep(2);
          rounds++;
          inside--;
        });
      }
    };
    await Promise.all(clients.flatMap((client) => Array.from({ length: 5 }, () => task(client))));
    assert.equal(rounds, 60);
    assert.equal(maxInside, 1);
  });

  it('the watchdog keeps a spin lock alive', async () => {
    const lock = server.lockClient({ watchdogTimeout: 300 }).getSpinLock('watchdog');
    await lock.lock();
    await sleep(1_000);
    assert.equal(await lock.isHeldByCurrentOwner(), true);
    await lock.unlock();
    assert.deepEqual(await keysLeft(redis, 'watchdog'), []);
  });
});

describe('SpinLock: waiting by polling', () => {
  it('waits without any subscription and takes the lock once it is free', async () => {
    const holder = server.lockClient().getLock('no-pubsub');
    const locks = server.lockClient();
    const spin = locks.getSpinLock('no-pubsub', { initialDelay: 5, maxDelay: 50 });
    await holder.lock();
    const waiting = spin.lock();
    await sleep(200);
    const channel = `latchkey:{no-pubsub}:lock:hand-over:${locks.id}`;
    const [, subscribers] = (await redis.pubsub('SHARDNUMSUB', channel)) as [string, number];
    assert.equal(Number(subscribers), 0);
    assert.equal(contextOf(locks).waiters.channelCount, 0);
    await holder.unlock();
    await waiting;
    assert.equal(await spin.isHeldByCurrentOwner(), true);
    await spin.unlock();
  });

  it('spaces attempts by exponential backoff', async () => {
    const holder = server.lockClient().getLock('backoff');
    await holder.lock({ leaseTime: 60_000 });
    const fixed = server.lockClient().getSpinLock('backoff', { initialDelay: 10, multiplier: 1, jitter: 0 });
    const growing = server
      .lockClient()
      .getSpinLock('backoff', { initialDelay: 10, maxDelay: 400, multiplier: 2, jitter: 0 });
    await redis.config('RESETSTAT');
    assert.equal(await fixed.tryLock({ waitTime: 800 }), false);
    const fixedAttempts = await scriptCalls();
    await redis.config('RESETSTAT');
    assert.equal(await growing.tryLock({ waitTime: 800 }), false);
    const growingAttempts = await scriptCalls();
    // Fixed 10 ms: ~80 attempts. Growing 10, 20, 40, ... capped at 400 ms: 8 attempts.
    assert.ok(fixedAttempts >= 30, `fixed interval made ${fixedAttempts} attempts`);
    assert.ok(growingAttempts >= 5 && growingAttempts <= 10, `exponential backoff made ${growingAttempts} attempts`);
    await holder.unlock();
  });

  it('never sleeps past the holder lease', async () => {
    const holder = server.lockClient().getLock('lease-bound');
    await holder.lock({ leaseTime: 150 });
    const spin = server.lockClient().getSpinLock('lease-bound', { initialDelay: 10_000, maxDelay: 10_000 });
    const started = Date.now();
    await spin.lock();
    assert.ok(Date.now() - started < 2_000, `waited ${Date.now() - started} ms`);
    await spin.unlock();
  });

  it('abort stops the spinning at once with the signal reason', async () => {
    const holder = server.lockClient().getLock('abort');
    await holder.lock();
    const spin = server.lockClient().getSpinLock('abort', { initialDelay: 5_000, maxDelay: 5_000 });
    const controller = new AbortController();
    const waiting = spin.lock({ signal: controller.signal });
    await sleep(50);
    const reason = new Error('stop');
    const started = Date.now();
    controller.abort(reason);
    await assert.rejects(waiting, (error) => error === reason);
    assert.ok(Date.now() - started < 1_000);
    await holder.unlock();
    await eventually(async () => !(await spin.isLocked()), 10_000);
  });
});

describe('SpinLock: failure', () => {
  // Short pauses: shutdown() comes between attempts; 20 s: in the middle of a pause.
  for (const pause of [20, 20_000]) {
    it(`shutdown() ends a spinning waiter with ${pause} ms pauses at once`, async () => {
      const name = `shutdown-${pause}`;
      const holder = server.lockClient().getLock(name);
      await holder.lock();
      const locks = server.lockClient();
      const waiting = locks
        .getSpinLock(name, { initialDelay: pause, maxDelay: pause })
        .lock()
        .catch((error: unknown) => error);
      await sleep(200); // the first attempt found the lock held; the waiter spins or sleeps
      await locks.shutdown();
      const error = await Promise.race([waiting, sleep(1_000).then(() => 'still waiting 1 s after shutdown()')]);
      assert.ok(error instanceof LatchkeyError && error.code === 'LATCHKEY_SHUT_DOWN', String(error));
      await holder.unlock();
      await sleep(60);
      assert.equal(await holder.isLocked(), false);
    });
  }

  it('a frozen server gives the waiter its timeout or an error, never a hang', async () => {
    const frozen = await startServer();
    await frozen.lockClient().getLock('frozen').lock({ leaseTime: 60_000 });
    const spin = frozen.lockClient({ commandTimeout: 300 }).getSpinLock('frozen', { initialDelay: 20, maxDelay: 50 });
    const timed = spin.tryLock({ waitTime: 500 }).catch((error: unknown) => error);
    const untimed = spin.lock().catch((error: unknown) => error);
    await sleep(100);
    frozen.freeze();
    const started = Date.now();
    const [first, second] = await Promise.all([timed, untimed]);
    frozen.resume();
    assert.ok(first === false || first instanceof RedisUnavailableError, String(first));
    assert.ok(second instanceof RedisUnavailableError, String(second));
    assert.ok(Date.now() - started < 3_000, `took ${Date.now() - started} ms`);
  });
});

describe('SpinLock: backoff arithmetic and input', () => {
  it('grows by the multiplier up to maxDelay, jittered downwards', () => {
    const exact = resolveBackoff({ initialDelay: 20, maxDelay: 200, multiplier: 2, jitter: 0 });
    assert.deepEqual(
      [0, 1, 2, 3, 4, 5].map((retry) => backoffDelay(exact, retry)),
      [20, 40, 80, 160, 200, 200],
    );
    const jittered = resolveBackoff({ initialDelay: 100, maxDelay: 100, jitter: 0.5 });
    assert.equal(
      backoffDelay(jittered, 0, () => 0),
      100,
    );
    assert.equal(
      backoffDelay(jittered, 0, () => 0.5),
      75,
    );
    for (let i = 0; i < 100; i++) {
      const delay = backoffDelay(jittered, 3);
      assert.ok(delay > 50 && delay <= 100, String(delay));
    }
    assert.deepEqual(resolveBackoff(undefined), SPIN_BACKOFF_DEFAULTS);
  });

  it('refuses bad backoff options before reaching Redis', () => {
    const locks = server.lockClient();
    assert.throws(() => locks.getSpinLock('x', 'fast' as never), { name: 'TypeError', message: /`backoff`/ });
    assert.throws(() => locks.getSpinLock('x', { initialDelay: -1 }), {
      name: 'RangeError',
      message: /`backoff.initialDelay`/,
    });
    assert.throws(() => locks.getSpinLock('x', { initialDelay: '5' as never }), {
      name: 'TypeError',
      message: /`backoff.initialDelay`/,
    });
    assert.throws(() => locks.getSpinLock('x', { initialDelay: 50, maxDelay: 10 }), {
      name: 'RangeError',
      message: /`backoff.maxDelay`/,
    });
    assert.throws(() => locks.getSpinLock('x', { multiplier: 0.5 }), {
      name: 'RangeError',
      message: /`backoff.multiplier`/,
    });
    assert.throws(() => locks.getSpinLock('x', { jitter: Number.NaN }), {
      name: 'RangeError',
      message: /`backoff.jitter`/,
    });
    assert.throws(() => locks.getSpinLock('x', { jitter: 2 }), { name: 'RangeError', message: /`backoff.jitter`/ });
    assert.throws(() => locks.getSpinLock(undefined as never), { name: 'TypeError', message: /`name`/ });
  });
});

describe('SpinLock: after every test above', () => {
  it('leaves no latchkey key without a TTL', async () => {
    await assertNoKeyWithoutTtl(redis, []);
  });
});
