/**
 * A hand-over that reaches the waiter late must not grant a lock it no longer holds (docs/guarantees.md,
 * 3.9 Validity is measured from before the grant). The release hands the lock to the first waiter for
 * a short reservation (min(lease, fairWaiterTimeout)); if the waiter learns of it only after that
 * ran out, `lock()` may resolve only after it made sure it holds the lock.
 */
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { LockClient, type Lock } from '../../src/index.js';
import { sleep } from '../../harness/eventually.js';
import { startServer, type TestServer } from '../../harness/server.js';
import { heldInRedisBy, newConnections, proxiedLockClient, show, startProxy, within } from './helpers.js';

let server: TestServer;
before(async () => {
  server = await startServer(['--enable-debug-command', 'yes']);
});

/** The waiter's lease: its hand-over reservation is min(this, fairWaiterTimeout) = this. */
const WAITER_LEASE = 300;

const kinds: readonly [string, (locks: LockClient, name: string) => Lock][] = [
  ['Lock', (locks, name) => locks.getLock(name)],
  ['FairLock', (locks, name) => locks.getFairLock(name)],
];

interface Timeline {
  /** When the waiter's lock() resolved (local ms), and whether Redis showed it holding then. */
  waiterResolved?: number;
  waiterHeldInRedis?: boolean;
  waiterError?: unknown;
  /** When the bystander's tryLock() succeeded and when it released. */
  bystanderAcquired?: number;
  bystanderReleased?: number;
}

/** The waiter: lock({ leaseTime }) and, the moment it resolves, a look at the lock hash in Redis. */
function startWaiter(lock: Lock, locks: LockClient, admin: ReturnType<TestServer['client']>, t: Timeline) {
  return lock.lock({ leaseTime: WAITER_LEASE }).then(
    async () => {
      t.waiterResolved = Date.now();
      t.waiterHeldInRedis = await heldInRedisBy(admin, lock.name, locks);
    },
    (error: unknown) => void (t.waiterError = error),
  );
}

/** The bystander keeps trying tryLock() for `forMs`; when it gets the lock it holds it `holdMs`. */
async function bystander(lock: Lock, t: Timeline, forMs: number, holdMs: number): Promise<void> {
  const until = Date.now() + forMs;
  while (Date.now() < until) {
    if (await lock.tryLock({ leaseTime: 5_000 })) {
      t.bystanderAcquired = Date.now();
      await sleep(holdMs);
      t.bystanderReleased = Date.now();
      await lock.unlock();
      return;
    }
    await sleep(5);
  }
}

function relative(at: number | undefined, to: number): string {
  if (at === undefined) return 'never';
  return at >= to ? `${at - to} ms after lock() resolved` : `${to - at} ms before lock() resolved`;
}

/**
 * Runs one whole contended cycle (hold, wait, hand-over, release) on another name, so that every
 * script of that path is in the server's cache: a NOSCRIPT retry would send the release after
 * DEBUG SLEEP instead of before it.
 */
async function warmUp(get: (locks: LockClient, name: string) => Lock, locksA: LockClient, name: string) {
  const holder = get(locksA, name);
  const waiter = get(server.lockClient(), name);
  await holder.lock({ leaseTime: 10_000 });
  const waiting = waiter.lock({ leaseTime: 10_000 });
  await sleep(100);
  await holder.unlock();
  await waiting;
  await waiter.unlock();
}

/** Asserts that the waiter held the lock when it resolved, and never alongside the bystander. */
function assertNoOverlap(t: Timeline, what: string): void {
  assert.ok(
    t.waiterResolved !== undefined,
    `${what}: the waiter never acquired the lock${t.waiterError === undefined ? '' : `: ${show(t.waiterError)}`}`,
  );
  assert.equal(
    t.waiterHeldInRedis,
    true,
    `${what}: lock() resolved although Redis did not show the waiter holding the lock ` +
      `(the bystander's tryLock() succeeded ${relative(t.bystanderAcquired, t.waiterResolved)})`,
  );
  if (t.bystanderAcquired === undefined) return;
  // The waiter may count on its lease until at most WAITER_LEASE after it resolved (less: the lease
  // dates from before the grant); 50 ms of that is left as slack for timers.
  const waiterUntil = t.waiterResolved + WAITER_LEASE - 50;
  const bystanderUntil = t.bystanderReleased ?? Infinity;
  const overlap = t.waiterResolved < bystanderUntil && t.bystanderAcquired < waiterUntil;
  assert.ok(
    !overlap,
    `${what}: lock() resolved while the bystander held the lock ` +
      `(its tryLock() succeeded ${relative(t.bystanderAcquired, t.waiterResolved)})`,
  );
}

describe('a late hand-over never grants a lock the waiter does not hold', { timeout: 25_000 }, () => {
  for (const [kind, get] of kinds) {
    it(`${kind}: Redis blocks (DEBUG SLEEP) right after running the release`, async () => {
      const name = `late-sleep-${kind}`;
      const admin = server.client();
      // The releaser's own ioredis client, to put DEBUG SLEEP on the same connection behind the release.
      const redisA = server.client();
      const locksA = new LockClient(redisA);
      const t: Timeline = {};
      try {
        await warmUp(get, locksA, `${name}-warm-up`);
        const holder = get(locksA, name);
        await holder.lock({ leaseTime: 10_000 });
        const locksB = server.lockClient();
        const waiting = startWaiter(get(locksB, name), locksB, admin, t);
        await sleep(300); // the waiter is queued and subscribed
        const byLock = get(server.lockClient(), name);
        await byLock.isLocked(); // connection and scripts warm
        await admin.ping();

        // With the server stopped, the release and DEBUG SLEEP 1 land in one read of one socket:
        // Redis runs the release (hand-over, 300 ms reservation, PUBLISH queued for the waiter),
        // then sleeps 1 s before it writes anything out. The waiter hears of the hand-over only
        // after its reservation ran out, and the bystander's tryLock runs right after the sleep.
        server.freeze();
        let unlocking: Promise<void>;
        let sleeping: Promise<unknown>;
        try {
          unlocking = holder.unlock();
          await sleep(50);
          sleeping = redisA.call('DEBUG', 'SLEEP', '1');
          await sleep(50);
        } finally {
          server.resume();
        }
        const trying = bystander(byLock, t, 2_500, 200);
        await unlocking;
        await sleeping;
        await within(waiting, 5_000, undefined);
        await trying;
        assertNoOverlap(t, kind);
      } finally {
        await locksA.shutdown();
      }
    });

    it(`${kind}: the waiter's pub/sub connection stalls past its reservation`, async () => {
      const name = `late-stall-${kind}`;
      const admin = server.client();
      const proxy = await startProxy(server);
      const t: Timeline = {};
      const holder = get(server.lockClient(), name);
      await holder.lock({ leaseTime: 10_000 });
      const { locks: locksB } = await proxiedLockClient(server, proxy);
      const known = proxy.connectionIds;
      const waiting = startWaiter(get(locksB, name), locksB, admin, t);
      await sleep(300); // the waiter is queued and subscribed on its own (second) connection
      const [pubsub] = newConnections(proxy, known);
      assert.ok(pubsub !== undefined, 'the waiter opened no pub/sub connection');
      const byLock = get(server.lockClient(), name);
      await byLock.isLocked();

      proxy.stall('down', pubsub);
      let trying: Promise<void> | undefined;
      try {
        await holder.unlock(); // hands the lock over; the message waits in the proxy
        await sleep(WAITER_LEASE * 2); // the reservation runs out
        trying = bystander(byLock, t, 2_000, 400);
        const until = Date.now() + 2_000;
        while (t.bystanderAcquired === undefined && Date.now() < until) await sleep(5);
      } finally {
        proxy.resume('down', pubsub);
      }
      await within(waiting, 5_000, undefined);
      await trying;
      assertNoOverlap(t, kind);
    });
  }
});
