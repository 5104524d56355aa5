/**
 * The pub/sub connection races its own handshake, and a lost subscription strands waiters (docs/guarantees.md,
 * 3.4 Subscriptions survive reconnects). A fresh LockClient whose first use is a burst of waits
 * subscribes while its pub/sub connection is still in its handshake (ioredis writes SUBSCRIBE
 * before its ready check's INFO, which then fails); it must neither reject those waits nor lose
 * their hand-overs. And a parked waiter must hear of a release made while its pub/sub connection
 * was down.
 */
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { ShutDownError, type Lock, type LockClient, type LockClientOptions } from '../../src/index.js';
import { contextOf } from '../../src/client.js';
import { lockKeys } from '../../src/keys.js';
import { sleep } from '../../harness/eventually.js';
import { startServer, type TestServer } from '../../harness/server.js';
import { newConnections, outcome, proxiedLockClient, show, startProxy, within } from './helpers.js';

let server: TestServer;
before(async () => {
  server = await startServer();
});

/**
 * Long leases and places: a waiter whose subscription was lost, or that does not re-check after a
 * reconnect, waits for a retry 5 s away (a third of fairWaiterTimeout) or for a 30 s lease.
 */
const SLOW_FALLBACK = { watchdogTimeout: 30_000, fairWaiterTimeout: 15_000, commandTimeout: 3_000 } as const;
/** A hand-over that takes longer than this after the release was lost on its way. */
const PROMPT_MS = 2_000;

/**
 * Starts WAITS waits on as many held locks through `waiter`, `stagger` ms apart, releases them all
 * once every wait is parked, and reports every wait that rejected or was not handed its lock
 * within PROMPT_MS of the release.
 */
async function burstOfWaits(
  holders: LockClient,
  waiter: LockClient,
  prefix: string,
  stagger: number,
  failures: string[],
): Promise<void> {
  const WAITS = 8;
  const names = Array.from({ length: WAITS }, (_, i) => `${prefix}-${i}`);
  const held = names.map((name) => holders.getLock(name));
  await Promise.all(held.map((lock) => lock.lock()));
  const results = new Map<string, { ok: boolean; error?: unknown; at: number }>();
  const waits = names.map(async (name, i) => {
    await sleep(i * stagger);
    const result = await outcome(waiter.getLock(name).lock());
    results.set(name, { ...result, at: Date.now() });
  });
  await sleep(400); // every wait is parked
  const releasedAt = Date.now();
  await Promise.all(held.map((lock) => lock.unlock()));
  await within(Promise.all(waits), PROMPT_MS, undefined);
  await waiter.shutdown(); // ends the waits still parked
  for (const name of names) {
    const result = results.get(name);
    if (result === undefined || result.at - releasedAt > PROMPT_MS)
      failures.push(`${name}: not acquired within ${PROMPT_MS} ms of the release`);
    else if (!result.ok) failures.push(`${name}: lock() rejected: ${show(result.error)}`);
  }
}

describe('subscribing while the pub/sub connection is in its handshake', { timeout: 25_000 }, () => {
  it('a slow handshake (replies delayed 20 ms): waits started 2 ms apart neither reject nor strand', async () => {
    // The replies' delay holds the new pub/sub connection in its handshake (CLIENT SETINFO, then
    // the INFO ready check) for about 40 ms, while the waits' first attempts come back one by one
    // and subscribe: deterministic, where undelayed timing hits that window only now and then.
    const proxy = await startProxy(server);
    const holders = server.lockClient();
    const failures: string[] = [];
    for (let c = 0; c < 2; c++) {
      const { locks } = await proxiedLockClient(server, proxy, SLOW_FALLBACK); // command connection ready
      proxy.delay('down', 20);
      try {
        await burstOfWaits(holders, locks, `slow-handshake-${c}`, 2, failures);
      } finally {
        proxy.delay('down', 0);
      }
    }
    assert.deepEqual(failures, [], `${failures.length} of 16 waits failed`);
  });

  it('fresh clients whose first use is a burst of waits 1 ms apart: no rejection, every hand-over prompt', async () => {
    // Undelayed: each client hits the handshake window now and then (most runs see 8-32 of the 96
    // waits fail on main); clients start 40 ms apart, so that their handshakes do not overlap.
    const holders = server.lockClient();
    const failures: string[] = [];
    await Promise.all(
      Array.from({ length: 12 }, async (_, c) => {
        await sleep(c * 40);
        await burstOfWaits(holders, server.lockClient(SLOW_FALLBACK), `handshake-${c}`, 1, failures);
      }),
    );
    assert.deepEqual(failures, [], `${failures.length} of 96 waits failed`);
  });
});

describe('a parked waiter after its pub/sub connection was killed', { timeout: 25_000 }, () => {
  for (const kind of ['Lock', 'FairLock'] as const) {
    it(`${kind}: a release made while the connection was down reaches the waiter promptly`, async () => {
      const name = `pubsub-killed-${kind}`;
      const get = (locks: LockClient) => (kind === 'Lock' ? locks.getLock(name) : locks.getFairLock(name));
      const holder = get(server.lockClient());
      const admin = server.client();
      await holder.lock();
      const waiterClient = server.lockClient(SLOW_FALLBACK);
      try {
        const waiting = outcome(get(waiterClient).lock());
        await sleep(300); // parked, subscribed
        const killed = Number(await admin.call('CLIENT', 'KILL', 'TYPE', 'pubsub'));
        assert.ok(killed >= 1, 'no pub/sub connection was killed');
        // Released before ioredis reconnects (it waits 50 ms first): the hand-over message is lost.
        await holder.unlock();
        const result = await within(waiting, PROMPT_MS, undefined);
        assert.ok(
          result !== undefined,
          `the waiter did not acquire within ${PROMPT_MS} ms of a release made while its pub/sub connection was down`,
        );
        assert.ok(result.ok, `lock() rejected: ${result.ok ? '' : show(result.error)}`);
      } finally {
        await waiterClient.shutdown(); // ends a wait still parked (on failure)
      }
    });
  }
});

describe('a subscription Redis does not confirm', { timeout: 30_000 }, () => {
  interface StuckWait {
    readonly locks: LockClient;
    readonly holder: Lock;
    readonly waiting: Promise<{ ok: true; value: unknown } | { ok: false; error: unknown }>;
    readonly resume: () => void;
  }

  /**
   * Runs `test` with a client whose pub/sub connection is open and then stalls (the command
   * connection still answers), and a wait on a lock held elsewhere: its first attempt finds the
   * lock busy, and its SSUBSCRIBE goes unanswered, bounded only by commandTimeout (10 s). The
   * connection flows again and the client is shut down at the end.
   */
  async function withWaitStuckInSubscribe(
    name: string,
    { signal, options = {} }: { signal?: AbortSignal; options?: LockClientOptions },
    test: (stuck: StuckWait) => Promise<void>,
  ): Promise<void> {
    const proxy = await startProxy(server);
    const { locks, commandConnection } = await proxiedLockClient(server, proxy, { commandTimeout: 10_000, ...options });
    const holders = server.lockClient();
    // One wait first, so that the pub/sub connection exists.
    const warm = holders.getLock(`${name}-warm`);
    await warm.lock();
    const warmWaiter = locks.getLock(`${name}-warm`);
    const warming = warmWaiter.lock();
    await sleep(200);
    await warm.unlock();
    await warming;
    await warmWaiter.unlock();
    const pubsub = newConnections(proxy, [commandConnection]);
    assert.equal(
      pubsub.length,
      1,
      `expected the pub/sub connection beside the command connection, saw ${pubsub.length}`,
    );
    proxy.stall('both', pubsub[0]);
    const resume = (): void => proxy.resume('both', pubsub[0]);
    try {
      const holder = holders.getLock(name);
      await holder.lock();
      const waiting = outcome(locks.getLock(name).lock(signal ? { signal } : undefined));
      await sleep(300); // the first attempt came back busy; the subscription is being made
      // Not parked: the server has not seen the SSUBSCRIBE of this lock's hand-over channel.
      const channels = (await server.client().call('PUBSUB', 'SHARDCHANNELS')) as string[];
      const handOver = lockKeys('latchkey:', name).handOverPrefix;
      assert.deepEqual(
        channels.filter((channel) => channel.startsWith(handOver)),
        [],
        'the wait is subscribed already',
      );
      await test({ locks, holder, waiting, resume });
    } finally {
      resume();
      await locks.shutdown();
    }
  }

  /** The wait must reject with ShutDownError within `ms` of shutdown(). */
  async function assertShutDownWithin(waiting: StuckWait['waiting'], ms: number): Promise<void> {
    const result = await within(waiting, ms, undefined);
    assert.ok(result !== undefined, `the wait was still pending ${ms / 1_000} s after shutdown()`);
    assert.ok(!result.ok && result.error instanceof ShutDownError, `lock() ended with ${show(result)}`);
  }

  it('shutdown() does not wait for it, and the wait rejects with ShutDownError at once', async () => {
    await withWaitStuckInSubscribe('unconfirmed-shutdown', {}, async ({ locks, waiting }) => {
      const started = Date.now();
      const shutDown = await within(
        locks.shutdown().then(() => true),
        2_000,
        false,
      );
      assert.ok(shutDown, `shutdown() still pending ${Date.now() - started} ms after it was called`);
      await assertShutDownWithin(waiting, 2_000);
    });
  });

  it('a wait whose subscription failed is not left asleep until the holder lease ends', async () => {
    // The first subscription fails after commandTimeout (1 s): until the wait subscribes again it
    // would hear no release, so it polls as after a failed call (25 ms to 1 s), not at the
    // holder's 30 s lease end; the connection flowing again, its next subscription is confirmed.
    const options = { commandTimeout: 1_000 };
    await withWaitStuckInSubscribe('unconfirmed-then-released', { options }, async ({ holder, waiting, resume }) => {
      await sleep(850); // the first subscription has failed
      resume();
      await sleep(900);
      await holder.unlock();
      const result = await within(waiting, 2_000, undefined);
      assert.ok(result !== undefined, 'the wait had not taken the lock 2 s after its release');
      assert.ok(result.ok, `lock() rejected: ${result.ok ? '' : show(result.error)}`);
    });
  });

  it('one that failed does not later drop the record of the subscription made after it', async () => {
    // The first subscription fails after commandTimeout (1 s); the wait subscribes again at once
    // and, the connection flowing again, is confirmed and parks (for up to a third of
    // fairWaiterTimeout). The failed channel's record lingers 250 ms after its waiter left; it
    // must then forget only itself, not the live record the parked wait is on.
    const options = { commandTimeout: 1_000, fairWaiterTimeout: 15_000 };
    await withWaitStuckInSubscribe('unconfirmed-retried', { options }, async ({ locks, waiting, resume }) => {
      await sleep(850); // the first subscription has failed and the second is being made
      resume();
      await sleep(900); // the second is confirmed; the failed one's record has lingered out
      assert.equal(await within(waiting, 0, undefined), undefined, 'the wait ended before shutdown()');
      assert.equal(contextOf(locks).waiters.channelCount, 1, 'the client forgot the channel its wait is parked on');
      await locks.shutdown();
      await assertShutDownWithin(waiting, 1_000);
    });
  });

  it("an abort ends the wait at once, with the signal's reason", async () => {
    const controller = new AbortController();
    await withWaitStuckInSubscribe('unconfirmed-abort', { signal: controller.signal }, async ({ waiting }) => {
      const reason = new Error('the caller gave up');
      controller.abort(reason);
      const result = await within(waiting, 2_000, undefined);
      assert.ok(result !== undefined, 'the wait was still pending 2 s after the abort');
      assert.ok(!result.ok && result.error === reason, `lock() ended with ${show(result)}`);
    });
  });
});
