import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Redis } from 'ioredis';
import { createClient } from 'redis';
import { contextOf } from '../../src/client.js';
import { lockRenew } from '../../src/scripts/index.js';
import { LockClient, LockLostError, type Lock } from '../../src/index.js';
import { commandCalls, startServer, type TestServer } from '../../harness/server.js';
import { eventually, sleep } from '../../harness/eventually.js';

/**
 * Server-pushed loss detection at the default watchdogTimeout (30 s: renewal would take 10 s to
 * notice). Bounds are generous: they prove the push, not its speed (the bench measures that).
 */
const PUSHED_MS = 1_000;
/** A hold is read on the tracking connection 50 ms after it was taken; this leaves room. */
const TRACKED_AFTER_MS = 200;

let server: TestServer;
let admin: Redis;
before(async () => {
  server = await startServer();
  admin = server.client();
});

/** Resolves with the ms until `signal` aborts, or rejects after `ms`. */
function abortedWithin(signal: AbortSignal, ms: number): Promise<number> {
  const start = Date.now();
  return new Promise((resolve, reject) => {
    if (signal.aborted) return resolve(0);
    const timer = setTimeout(() => reject(new Error(`signal not aborted within ${ms} ms`)), ms);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve(Date.now() - start);
    });
  });
}

/** The Redis keys of every hold `locks` has now. */
function heldKeys(locks: LockClient): string[] {
  return [...contextOf(locks).holds.values()].map((hold) => hold.holdKey.split('\n')[0]!);
}

async function trackingConnections(): Promise<string[]> {
  const list = String(await admin.call('CLIENT', 'LIST'));
  return [...list.matchAll(/ name=(latchkey-\S+)/g)].map((match) => match[1]!);
}

describe('server-pushed loss detection', () => {
  const kinds: [string, (locks: LockClient, name: string) => Promise<AbortSignal>][] = [
    ['Lock', async (locks, name) => (await locks.getLock(name).acquire()).signal],
    ['FairLock', async (locks, name) => (await locks.getFairLock(name).acquire()).signal],
    ['FencedLock', async (locks, name) => (await locks.getFencedLock(name).acquire()).signal],
    ['SpinLock', async (locks, name) => (await locks.getSpinLock(name).acquire()).signal],
    ['ReadWriteLock write', async (locks, name) => (await locks.getReadWriteLock(name).writeLock().acquire()).signal],
    ['ReadWriteLock read', async (locks, name) => (await locks.getReadWriteLock(name).readLock().acquire()).signal],
    [
      'MultiLock member',
      async (locks, name) =>
        (await locks.getMultiLock(locks.getLock(`${name}-a`), locks.getLock(`${name}-b`)).acquire()).signal,
    ],
  ];
  for (const [kind, take] of kinds) {
    it(`aborts a ${kind}'s signal and emits lockLost as soon as its key is deleted`, async () => {
      const locks = server.lockClient();
      const lost: string[] = [];
      locks.on('lockLost', (name) => lost.push(name));
      const name = `deleted-${kind.replace(/\W/g, '')}`;
      const signal = await take(locks, name);
      await sleep(TRACKED_AFTER_MS);
      const [key] = heldKeys(locks);
      assert.equal(await admin.del(key!), 1);
      await abortedWithin(signal, PUSHED_MS);
      assert.ok(signal.reason instanceof LockLostError);
      assert.equal(lost.length, 1);
    });
  }

  it('tells a holder at once that another owner took its lock over', async () => {
    const locks = server.lockClient();
    const other = server.lockClient();
    const signal = (await locks.getLock('taken').acquire()).signal;
    await sleep(TRACKED_AFTER_MS);
    // An operator's delete and a new holder in one go, as after a long pause.
    await admin.del('latchkey:{taken}:lock');
    const taker = await other.getLock('taken').tryLock();
    assert.equal(taker, true);
    await abortedWithin(signal, PUSHED_MS);
  });

  it('tells a holder when its key expires early, within the server expiry cycle', async () => {
    const locks = server.lockClient();
    const signal = (await locks.getLock('expires').acquire()).signal;
    await sleep(TRACKED_AFTER_MS);
    await admin.pexpire('latchkey:{expires}:lock', 20);
    await abortedWithin(signal, 2_000);
    assert.equal(await admin.exists('latchkey:{expires}:lock'), 0);
  });

  it('never reports its own renewals, re-entries and partial releases as a loss, and still tells a real one', async () => {
    const locks = server.lockClient();
    const lost: string[] = [];
    locks.on('lockLost', (name) => lost.push(name));
    const lock = locks.getLock('busy');
    const readers = locks.getReadWriteLock('shared').readLock();
    const other = server.lockClient();
    await locks.scope(async () => {
      const { signal } = await lock.acquire();
      const { signal: readSignal } = await readers.acquire();
      await sleep(TRACKED_AFTER_MS);
      for (let i = 0; i < 2_000; i++) {
        await lock.lock(); // a re-entry: HINCRBY on the key, another connection's write
        await lock.unlock();
        // Another reader of the same key comes and goes.
        if (i % 10 === 0)
          await other
            .getReadWriteLock('shared')
            .readLock()
            .withLock(() => undefined);
        if (i % 100 === 0) await contextOf(locks).watchdog.renewAll();
      }
      // The last write to the key is the holder's own renewal, on the tracking connection.
      await contextOf(locks).watchdog.renewAll();
      await sleep(TRACKED_AFTER_MS);
      assert.equal(signal.aborted, false);
      assert.equal(readSignal.aborted, false);
      assert.deepEqual(lost, []);
      // Its key is still tracked after all those own writes: a deletion is told at once.
      await admin.del('latchkey:{busy}:lock');
      await abortedWithin(signal, PUSHED_MS);
      await readers.unlock();
    });
    assert.deepEqual(lost, ['busy']);
  });

  it('checks every hold at once when the tracking connection drops, and tracks again once it is back', async () => {
    const others = await trackingConnections();
    const ours = async (): Promise<string[]> => (await trackingConnections()).filter((name) => !others.includes(name));
    const locks = server.lockClient();
    const first = (await locks.getLock('dropped-1').acquire()).signal;
    const second = (await locks.getLock('dropped-2').acquire()).signal;
    await sleep(TRACKED_AFTER_MS);
    assert.equal((await ours()).length, 2);
    // The key goes while tracking is being cut: no invalidation can tell it.
    await admin.multi().call('CLIENT', 'KILL', 'TYPE', 'pubsub').del('latchkey:{dropped-1}:lock').exec();
    await abortedWithin(first, PUSHED_MS);
    assert.equal(second.aborted, false);
    // Back: the other hold is tracked again.
    await eventually(async () => (await ours()).length === 2, 5_000, 'tracking reconnected');
    await sleep(TRACKED_AFTER_MS);
    await admin.del('latchkey:{dropped-2}:lock');
    await abortedWithin(second, PUSHED_MS);
  });

  it('lets a renewal fail on a tracking connection that is closing without an unhandled rejection', async () => {
    // Sentinel's failover detector closes latchkey's connections at once, and until the socket's
    // 'close' event a command sent there is refused ("Stream isn't writeable"): a renewal sent in
    // that moment fails, and so does the read that tracks its keys again.
    const redis = server.client();
    const duplicates: Redis[] = [];
    const duplicate = redis.duplicate.bind(redis);
    redis.duplicate = (override) => {
      const made = duplicate(override);
      duplicates.push(made);
      return made;
    };
    const locks = new LockClient(redis);
    after(() => locks.shutdown());
    const unhandled: unknown[] = [];
    const record = (reason: unknown): number => unhandled.push(reason);
    process.on('unhandledRejection', record);
    try {
      const lease = await locks.getLock('closing-tracking').acquire();
      await sleep(TRACKED_AFTER_MS);
      const reader = duplicates.find((made) => made.options.connectionName?.startsWith('latchkey-tracking-'));
      assert.ok(reader, 'the tracking reader was opened');
      reader.disconnect(true);
      const { loss } = contextOf(locks);
      const renewal = loss.renew(lockRenew, ['latchkey:{closing-tracking}:lock'], [], Date.now() + 1_000);
      await assert.rejects(renewal, /Stream isn't writeable/);
      await sleep(100);
      assert.equal(lease.signal.aborted, false, String(lease.signal.reason));
      await lease.release();
    } finally {
      process.off('unhandledRejection', record);
    }
    assert.deepEqual(unhandled.map(String), []);
  });

  it("leaves the user's connection untouched and closes its own connections at shutdown", async () => {
    const others = await trackingConnections();
    const redis = server.client();
    const locks = new LockClient(redis);
    await locks.getLock('untouched').withLock(() => sleep(TRACKED_AFTER_MS));
    const info = (await redis.call('CLIENT', 'TRACKINGINFO')) as unknown[];
    assert.deepEqual(info[1], ['off']);
    const before = (await trackingConnections()).filter((name) => !others.includes(name));
    assert.equal(before.length, 2);
    await locks.shutdown();
    await eventually(
      async () => (await trackingConnections()).every((name) => !before.includes(name)),
      2_000,
      'tracking connections closed',
    );
  });

  it('keeps renewal batched: 1,000 held locks cost one renewal script per period, no check', async () => {
    const quiet = await startServer();
    const locks = quiet.lockClient({ watchdogTimeout: 600 });
    const handles: Lock[] = Array.from({ length: 1_000 }, (_, i) => locks.getLock(`many-${i}`));
    await Promise.all(handles.map((handle) => handle.lock()));
    await sleep(TRACKED_AFTER_MS);
    const counter = quiet.client();
    await counter.config('RESETSTAT');
    await sleep(2_000); // 10 renewal periods of 200 ms
    const scripts = (await commandCalls(counter, 'evalsha')) + (await commandCalls(counter, 'eval'));
    // Renewals run on the tracking connection, whose own writes Redis does not report: no check
    // follows them. Each is followed, in the same round trip, by the read that tracks its keys again.
    assert.ok(scripts >= 6 && scripts <= 14, `expected about 10 script calls in 2 s, got ${scripts}`);
    const retracked = await commandCalls(counter, 'exists');
    assert.ok(Math.abs(retracked - scripts) <= 2, `one tracking read per renewal: ${retracked} for ${scripts}`);
    const usec = /cmdstat_evalsha:calls=\d+,usec=(\d+)/.exec(await counter.info('commandstats'));
    // Redis' time for them stays small (a tracked script read per key would cost about 80 ms a call).
    assert.ok(Number(usec?.[1]) < scripts * 20_000, `Redis spent ${usec?.[1]} us on ${scripts} calls`);
    assert.equal(contextOf(locks).livenesses.size, 1_000);
    // The renewals left every key tracked: a change by anyone else is still told at once.
    const tracked = Number(/tracking_total_keys:(\d+)/.exec(await counter.info('stats'))?.[1]);
    assert.ok(tracked >= 1_000, `keys tracked after the renewals: ${tracked}`);
  });

  it('holds taken half a period apart come to share one renewal call per period', async () => {
    const quiet = await startServer();
    const locks = quiet.lockClient({ watchdogTimeout: 1_500, lossDetection: 'renewal' });
    const take = (prefix: string): Promise<unknown> =>
      Promise.all(Array.from({ length: 50 }, (_, i) => locks.getLock(`${prefix}-${i}`).lock()));
    await take('early');
    await sleep(300); // 0.6 of the 500 ms period: each group would be due in a round of its own
    await take('late');
    await sleep(1_000);
    const counter = quiet.client();
    await counter.config('RESETSTAT');
    await sleep(2_500); // 5 periods
    const scripts = (await commandCalls(counter, 'evalsha')) + (await commandCalls(counter, 'eval'));
    assert.ok(scripts >= 3 && scripts <= 7, `expected about 5 renewal calls in 2.5 s (10 unmerged), got ${scripts}`);
    assert.equal(contextOf(locks).livenesses.size, 100);
  });

  it("with lossDetection: 'renewal' opens no connection of its own and finds a loss at renewal", async () => {
    const locks = server.lockClient({ lossDetection: 'renewal', watchdogTimeout: 900 });
    const names = await trackingConnections();
    const signal = (await locks.getLock('renewal-only').acquire()).signal;
    await sleep(TRACKED_AFTER_MS);
    assert.deepEqual(
      (await trackingConnections()).filter((name) => !names.includes(name)),
      [],
    );
    await admin.del('latchkey:{renewal-only}:lock');
    await abortedWithin(signal, 2_000);
  });

  it('works the same on node-redis', async () => {
    const client = createClient({ url: `redis://${server.host}:${server.port}` });
    client.on('error', () => undefined);
    await client.connect();
    const locks = new LockClient(client);
    after(async () => {
      await locks.shutdown();
      await client.close();
    });
    const signal = (await locks.getLock('node-redis').acquire()).signal;
    await sleep(TRACKED_AFTER_MS);
    await admin.del('latchkey:{node-redis}:lock');
    await abortedWithin(signal, PUSHED_MS);
  });

  it('refuses an unknown lossDetection, naming the option', () => {
    assert.throws(
      () => server.lockClient({ lossDetection: 'poll' as 'push' }),
      (error: unknown) => error instanceof TypeError && error.message.includes('lossDetection'),
    );
  });
});
