/**
 * An unlock() of one of 2 re-entrant holds that fails (its reply comes after commandTimeout, though
 * Redis applied it) must not silently abandon the hold that is left (docs/guarantees.md, 3.2 Retries
 * are harmless: an outcome that stays unknown ends in a known state). After more than a
 * watchdogTimeout, either the lock is still held (renewed) or the outer lease's signal aborted.
 */
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import type { TcpProxy } from '../../harness/tcp-proxy.js';
import type { Lock, LockClient } from '../../src/index.js';
import { sleep } from '../../harness/eventually.js';
import { startServer, type TestServer } from '../../harness/server.js';
import { heldInRedisBy, outcome, proxiedLockClient, show, startProxy } from './helpers.js';

let server: TestServer;
let proxy: TcpProxy;
before(async () => {
  server = await startServer();
  proxy = await startProxy(server);
});

const WATCHDOG_MS = 900;
const COMMAND_TIMEOUT_MS = 150;

/**
 * With 2 holds taken, stalls the replies on the command connection while one unlock() runs, so it
 * fails after commandTimeout although Redis applied it, then resumes at once (the renewals keep
 * their lease) and checks the state one and a half watchdogTimeouts later.
 */
async function unlockFailsThenCheck(
  locks: LockClient,
  commandConnection: number,
  lock: Lock,
  signal: AbortSignal,
): Promise<void> {
  const admin = server.client();
  assert.equal(await lock.getHoldCount(), 2);
  proxy.stall('down', commandConnection);
  let unlocked: Awaited<ReturnType<typeof outcome>>;
  try {
    unlocked = await outcome(lock.unlock());
  } finally {
    proxy.resume('down', commandConnection);
  }
  // Redis applied that unlock: one hold is left, with the rest of its lease.
  await sleep(WATCHDOG_MS * 1.5);
  const held = await heldInRedisBy(admin, lock.name, locks);
  assert.ok(
    held || signal.aborted,
    `the remaining hold expired unrenewed and its signal never aborted ` +
      `(the unlock() ${unlocked.ok ? 'resolved' : `rejected: ${show(unlocked.error)}`})`,
  );
}

describe('a failed unlock() of one of 2 holds', { timeout: 20_000 }, () => {
  it('inside withLock(): the outer hold stays renewed or its signal aborts', async () => {
    const { locks, commandConnection } = await proxiedLockClient(server, proxy, {
      watchdogTimeout: WATCHDOG_MS,
      commandTimeout: COMMAND_TIMEOUT_MS,
    });
    const lock = locks.getLock('failed-unlock-with-lock');
    // withLock's own release at the end may fail (the lock may have been given up): only the check
    // inside counts, and it rejects withLock with its AssertionError.
    const result = await outcome(
      lock.withLock(async (signal) => {
        await lock.lock(); // re-enters: nested in the holder's callback
        await unlockFailsThenCheck(locks, commandConnection, lock, signal);
      }),
    );
    if (!result.ok && result.error instanceof assert.AssertionError) throw result.error;
  });

  it('inside scope(): acquire() then lock(); the lease stays renewed or its signal aborts', async () => {
    const { locks, commandConnection } = await proxiedLockClient(server, proxy, {
      watchdogTimeout: WATCHDOG_MS,
      commandTimeout: COMMAND_TIMEOUT_MS,
    });
    const lock = locks.getLock('failed-unlock-scope');
    await locks.scope(async () => {
      const lease = await lock.acquire();
      await lock.lock();
      try {
        await unlockFailsThenCheck(locks, commandConnection, lock, lease.signal);
      } finally {
        await lease.release().catch(() => undefined);
      }
    });
  });
});
