import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import type { Redis } from 'ioredis';
import type { LockLease } from '../../src/index.js';
import { eventually, sleep } from '../../harness/eventually.js';
import { startServer, type TestServer } from '../../harness/server.js';

/**
 * latchkey's own connections (the waiters' subscriber, the two tracking connections) are
 * duplicates of the user's client. A client that does not reconnect (`retryStrategy: () => null`,
 * or ioredis giving up after a Sentinel failover) ends them for good when they drop: latchkey must
 * replace them, not wait on dead connections forever.
 */
let server: TestServer;
before(async () => {
  server = await startServer();
});

/** latchkey's invalidation connections on the server `admin` talks to. */
async function invalidationSinks(admin: Redis): Promise<number> {
  return String(await admin.call('CLIENT', 'LIST', 'TYPE', 'pubsub')).split('name=latchkey-invalidations-').length - 1;
}

/** Once every hold is read (tracked) again, deleting `key` behind its holder aborts `lease` within 3 s. */
async function assertDeletionTold(admin: Redis, key: string, lease: LockLease): Promise<void> {
  await sleep(500);
  const deleted = Date.now();
  await admin.del(key);
  await eventually(() => lease.signal.aborted, 3_000, 'the loss told');
  assert.ok(Date.now() - deleted < 3_000);
}

describe("latchkey's own connections, ended for good, are replaced", () => {
  it('a waiter is still woken by the release, and a deleted key is still told', async () => {
    const noReconnect = { retryStrategy: () => null };
    // Slow fallbacks: only a working subscription or tracking connection can tell in time.
    const options = { watchdogTimeout: 60_000, fairWaiterTimeout: 60_000 };
    const holder = server.lockClient(options, noReconnect);
    const waiter = server.lockClient(options, noReconnect);
    const admin = server.client();

    const lease = await holder.getLock('ended:held').acquire();
    const first = await holder.getLock('ended:a').acquire();
    const next = waiter.getLock('ended:a');
    const waiting = next.tryLock({ waitTime: 30_000 });
    await sleep(300); // the waiter is subscribed, the holds are tracked

    // Ends the waiter's subscriber and the holder's invalidation connection (type pubsub).
    const killed = Number(await admin.call('CLIENT', 'KILL', 'TYPE', 'pubsub'));
    assert.ok(killed >= 2, `killed ${killed} pub/sub connections`); // the waiter's subscriber, the holder's sink
    await sleep(300);

    const released = Date.now();
    await first.release();
    assert.equal(await waiting, true);
    assert.ok(Date.now() - released < 2_000, `woken ${Date.now() - released} ms after the release`);
    await next.unlock();

    // The holder opens tracking again a few seconds later (the waiter opened its own when it got
    // the lock); from then on a deletion is told at once.
    await eventually(
      async () => (await invalidationSinks(admin)) === 2,
      10_000,
      "the holder's new invalidation connection",
    );
    await assertDeletionTold(admin, 'latchkey:{ended:held}:lock', lease);
  });

  it('tracking that could not be opened again is tried again later, with no new hold asking for it', async () => {
    // A server of its own: every invalidation connection on it is this holder's.
    const own = await startServer();
    const holder = own.lockClient({ watchdogTimeout: 60_000 }, { retryStrategy: () => null });
    const admin = own.client();
    const lease = await holder.getLock('ended:refused').acquire();
    await sleep(300); // tracked
    const rejected = async (): Promise<number> =>
      Number(/rejected_connections:(\d+)/.exec(String(await admin.info('stats')))![1]);
    assert.equal(await invalidationSinks(admin), 1);

    // Refuse every new connection (those open stay), then end the tracking connection: its
    // replacement cannot connect.
    const refusedBefore = await rejected();
    await admin.config('SET', 'maxclients', '1');
    await admin.call('CLIENT', 'KILL', 'TYPE', 'pubsub');
    await eventually(
      async () => (await rejected()) > refusedBefore,
      10_000,
      'the refused attempt to open tracking again',
    );
    await admin.config('SET', 'maxclients', '10000');

    // The holder takes nothing new: it must try again by itself, and then tell a deletion at once.
    await eventually(
      async () => (await invalidationSinks(admin)) === 1,
      10_000,
      "the holder's new invalidation connection",
    );
    await assertDeletionTold(admin, 'latchkey:{ended:refused}:lock', lease);
  });
});
