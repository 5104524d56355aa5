/**
 * Durations are integer milliseconds (docs/guarantees.md, 3.11 Durations). Fractional, huge or non-numeric
 * values reject with a RangeError / TypeError that names the argument, before anything is sent to
 * Redis, at every public entry point that takes a duration; and every accepted value works,
 * including those beyond Node's 2^31-1 ms timer limit (timers must be chained).
 */
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import type { Redis } from 'ioredis';
import { LockClient, LockLostError, MIN_LEASE_MS, type Lock } from '../../src/index.js';
import { sleep } from '../../harness/eventually.js';
import { startServer, type TestServer } from '../../harness/server.js';
import { outcome, show, within } from './helpers.js';

let server: TestServer;
let admin: Redis;
before(async () => {
  server = await startServer();
  admin = server.client();
});

/** Not integer milliseconds: fractional, beyond any safe integer, not finite, negative, not a number. */
const BAD: readonly unknown[] = [1.5, 0.5, 1000.5, 1e21, 2 ** 53 + 2, Number.NaN, Infinity, -1, '100'];

/** A refusal is synchronous validation: a call still pending after this was accepted. */
const PENDING_MS = 300;

/**
 * Commands Redis ran since the last CONFIG RESETSTAT, but the INFO / CONFIG of this test's admin and
 * the CLIENT SETINFO of a new ioredis connection's handshake (which Redis 7.0 does not know, and
 * Valkey 8 counts): latchkey sends neither.
 */
async function commandsRun(): Promise<number> {
  const info = await admin.info('commandstats');
  let total = 0;
  // Lines read `cmdstat_<command>[|<subcommand>]:calls=<n>,...`.
  for (const [, command, subcommand, calls] of info.matchAll(/cmdstat_(\w+)(?:\|(\w+))?:calls=(\d+)/g))
    if (command !== 'info' && command !== 'config' && subcommand !== 'setinfo') total += Number(calls);
  return total;
}

/** A fresh client whose command connection is ready (so its handshake is not counted). */
async function readyClient(): Promise<{ locks: LockClient; redis: Redis }> {
  const redis = server.client();
  const locks = new LockClient(redis);
  await locks.getLock('warm-up').isLocked();
  return { locks, redis };
}

/**
 * Calls `call(value)` with every BAD value and returns what went wrong: each must reject (or throw)
 * a RangeError or TypeError whose message names `argument`, and Redis must have run nothing
 * meanwhile. One fresh client per entry point, ready before the count starts.
 */
async function badValues(argument: string, call: EntryPoint['call']): Promise<string[]> {
  const failures: string[] = [];
  const { locks, redis } = await readyClient();
  try {
    for (const value of BAD) {
      await admin.config('RESETSTAT');
      const result = await within(
        outcome(Promise.resolve().then(() => call(locks, value, redis))),
        PENDING_MS,
        undefined,
      );
      const sent = await commandsRun();
      const what = typeof value === 'string' ? JSON.stringify(value) : String(value);
      if (result === undefined || result.ok) {
        // Accepted: what it started (a wait, a hold, retries) would blur the counts of the values after it.
        const how = result === undefined ? `still pending after ${PENDING_MS} ms` : `resolved ${show(result.value)}`;
        failures.push(`${what}: accepted (${how}; ${sent} command(s) reached Redis); later values not tried`);
        break;
      } else if (!(result.error instanceof RangeError || result.error instanceof TypeError))
        failures.push(`${what}: rejected with ${show(result.error)}`);
      else if (!result.error.message.includes(argument))
        failures.push(`${what}: ${show(result.error)} does not name \`${argument}\``);
      if (sent > 0) failures.push(`${what}: ${sent} command(s) reached Redis`);
    }
  } finally {
    await locks.shutdown();
  }
  return failures;
}

interface EntryPoint {
  readonly label: string;
  readonly argument: string;
  /** `redis`: the ready ioredis client under `locks`. */
  readonly call: (locks: LockClient, value: unknown, redis: Redis) => unknown;
}

let unique = 0;
/** A new name per call: a bad value that is accepted must not meet an earlier call's hold. */
const fresh = (): string => `durations-${++unique}`;

const lockKinds: readonly [string, (locks: LockClient) => Lock][] = [
  ['Lock', (locks) => locks.getLock(fresh())],
  ['FairLock', (locks) => locks.getFairLock(fresh())],
  ['SpinLock', (locks) => locks.getSpinLock(fresh())],
  ['FencedLock', (locks) => locks.getFencedLock(fresh())],
  ['ReadLock', (locks) => locks.getReadWriteLock(fresh()).readLock()],
  ['WriteLock', (locks) => locks.getReadWriteLock(fresh()).writeLock()],
  ['MultiLock', (locks) => locks.getMultiLock(locks.getLock(fresh()), locks.getLock(fresh()))],
  ['RedLock', (locks) => locks.getRedLock(locks.getLock(fresh()), locks.getLock(fresh()), locks.getLock(fresh()))],
];

const opts = (argument: string, value: unknown): Record<string, unknown> => ({ [argument]: value });

const entryPoints: EntryPoint[] = [
  ...lockKinds.flatMap(([kind, get]): EntryPoint[] => [
    { label: `${kind}.lock`, argument: 'leaseTime', call: (l, v) => get(l).lock(opts('leaseTime', v)) },
    ...['leaseTime', 'waitTime'].flatMap((argument): EntryPoint[] => [
      { label: `${kind}.tryLock`, argument, call: (l, v) => get(l).tryLock(opts(argument, v)) },
      { label: `${kind}.withLock`, argument, call: (l, v) => get(l).withLock(() => 1, opts(argument, v)) },
      { label: `${kind}.acquire`, argument, call: (l, v) => get(l).acquire(opts(argument, v)) },
    ]),
  ]),
  {
    label: 'FencedLock.lockAndGetToken',
    argument: 'leaseTime',
    call: (l, v) => l.getFencedLock(fresh()).lockAndGetToken(opts('leaseTime', v)),
  },
  ...['leaseTime', 'waitTime'].map((argument): EntryPoint => ({
    label: 'FencedLock.tryLockAndGetToken',
    argument,
    call: (l, v) => l.getFencedLock(fresh()).tryLockAndGetToken(opts(argument, v)),
  })),
  {
    label: 'Semaphore.tryAcquire',
    argument: 'waitTime',
    call: (l, v) => l.getSemaphore(fresh()).tryAcquire(opts('waitTime', v)),
  },
  {
    label: 'PermitExpirableSemaphore.acquire',
    argument: 'leaseTime',
    call: (l, v) => l.getPermitExpirableSemaphore(fresh()).acquire(opts('leaseTime', v)),
  },
  ...['leaseTime', 'waitTime'].map((argument): EntryPoint => ({
    label: 'PermitExpirableSemaphore.tryAcquire',
    argument,
    call: (l, v) => l.getPermitExpirableSemaphore(fresh()).tryAcquire(opts(argument, v)),
  })),
  {
    label: 'PermitExpirableSemaphore.updateLeaseTime',
    argument: 'leaseTime',
    call: (l, v) => l.getPermitExpirableSemaphore(fresh()).updateLeaseTime('some-permit', v as number),
  },
  {
    label: 'CountDownLatch.await',
    argument: 'waitTime',
    call: (l, v) => l.getCountDownLatch(fresh()).await(opts('waitTime', v)),
  },
  ...['watchdogTimeout', 'maxLeaseTime', 'fairWaiterTimeout', 'commandTimeout'].map((argument): EntryPoint => ({
    label: 'new LockClient',
    argument,
    call: (l, v) => {
      const made = new LockClient(server.client(), opts(argument, v));
      void made.shutdown();
      return made.id;
    },
  })),
  ...['initialDelay', 'maxDelay'].map((argument): EntryPoint => ({
    label: 'LockClient.getSpinLock backoff',
    argument,
    call: (l, v) => l.getSpinLock(fresh(), opts(argument, v)).name,
  })),
];

describe('bad durations reject before Redis, naming the argument', { timeout: 28_000 }, () => {
  for (const { label, argument, call } of entryPoints) {
    it(`${label}({ ${argument} })`, async () => {
      const failures = await badValues(argument, call);
      assert.deepEqual(failures, [], `${label}, \`${argument}\`: ${failures.length} bad value(s) not refused`);
    });
  }
});

const DAYS_30 = 30 * 24 * 60 * 60 * 1000;
const BEYOND_TIMERS = 2 ** 31;

/** Resolves after `ms` with whether `signal` stayed un-aborted all along. */
async function staysUnaborted(signal: AbortSignal, ms: number): Promise<boolean> {
  await sleep(ms);
  return !signal.aborted;
}

describe('durations beyond 2^31-1 ms work', { timeout: 20_000 }, () => {
  it('acquire({ leaseTime: 30 days }): the signal does not abort and Redis keeps the lock', async () => {
    const lock = server.lockClient().getLock('thirty-days-acquire');
    const lease = await lock.acquire({ leaseTime: DAYS_30 });
    try {
      assert.equal(
        await staysUnaborted(lease.signal, 300),
        true,
        `the lease's signal aborted: ${show(lease.signal.reason)}`,
      );
      assert.ok((await lock.remainTimeToLive()) > DAYS_30 - 60_000, 'the lock does not live 30 days in Redis');
    } finally {
      await lease.release().catch(() => undefined);
    }
  });

  it('withLock(fn, { leaseTime: 30 days }): the signal given to fn does not abort', async () => {
    const lock = server.lockClient().getLock('thirty-days-with-lock');
    const result = await outcome(
      lock.withLock((signal) => staysUnaborted(signal, 300).then((ok) => ok || show(signal.reason)), {
        leaseTime: DAYS_30,
      }),
    );
    assert.ok(result.ok && result.value === true, `withLock: ${result.ok ? String(result.value) : show(result.error)}`);
  });

  it('watchdogTimeout of 30 days, if accepted: the watchdog does not renew every millisecond', async () => {
    // Each duration has a documented range (docs/guarantees.md, 3.11): a RangeError naming it is a
    // refusal, not a bug.
    let locks: LockClient;
    try {
      locks = server.lockClient({ watchdogTimeout: DAYS_30 });
    } catch (error) {
      assert.ok(error instanceof RangeError && error.message.includes('watchdogTimeout'), show(error));
      return;
    }
    const lock = locks.getLock('thirty-days-watchdog');
    await lock.lock();
    try {
      // Past the one-time set-up of loss detection (its connections, the hold's first read).
      await sleep(300);
      await admin.config('RESETSTAT');
      await sleep(300);
      const sent = await commandsRun();
      // Renewal is due every 10 days: nothing at all should run in these 300 ms.
      assert.ok(sent <= 2, `${sent} commands ran in 300 ms while one lock was held`);
      assert.ok((await lock.remainTimeToLive()) > DAYS_30 - 60_000, 'the lock does not live 30 days in Redis');
    } finally {
      await lock.unlock().catch(() => undefined);
    }
  });

  /** `wait` (with waitTime 2^31) must still be waiting after 500 ms, and resolve `true` once `free` ran. */
  async function waitsBeyondTimers(wait: () => Promise<unknown>, free: () => Promise<unknown>): Promise<void> {
    const waiting = outcome(wait());
    const early = await within(waiting, 500, undefined);
    await free();
    const result = await within(waiting, 3_000, undefined);
    assert.equal(early, undefined, `gave up within 500 ms: ${early?.ok ? show(early.value) : show(early?.error)}`);
    assert.ok(
      result?.ok && result.value === true,
      `settled ${result === undefined ? 'never' : result.ok ? show(result.value) : show(result.error)} after the release`,
    );
  }

  it('tryLock({ waitTime: 2^31 }) on a held lock waits, and is true once the holder releases', async () => {
    const holder = server.lockClient().getLock('wait-beyond-timers');
    const waiter = server.lockClient().getLock('wait-beyond-timers');
    await holder.lock();
    await waitsBeyondTimers(
      () => waiter.tryLock({ waitTime: BEYOND_TIMERS }),
      () => holder.unlock(),
    );
    await waiter.unlock();
  });

  it('Semaphore.tryAcquire({ waitTime: 2^31 }) waits for a permit', async () => {
    const semaphore = server.lockClient().getSemaphore('semaphore-beyond-timers');
    await semaphore.trySetPermits(0);
    await waitsBeyondTimers(
      () => semaphore.tryAcquire({ waitTime: BEYOND_TIMERS }),
      () => semaphore.release(),
    );
  });

  it('CountDownLatch.await({ waitTime: 2^31 }) waits for the count to reach 0', async () => {
    const latch = server.lockClient().getCountDownLatch('latch-beyond-timers');
    await latch.trySetCount(1);
    await waitsBeyondTimers(
      () => latch.await({ waitTime: BEYOND_TIMERS }),
      () => latch.countDown(),
    );
  });
});

describe(
  'the shortest leases: refused below MIN_LEASE_MS, and the minimum is granted at once',
  { timeout: 30_000 },
  () => {
    const TOO_SHORT = [1, 2, MIN_LEASE_MS - 1];
    /** Every way to take a lock with a lease; each resolves once the lock is held. */
    const takes: readonly [string, (lock: Lock, leaseTime: number) => Promise<unknown>][] = [
      ['lock', (lock, leaseTime) => lock.lock({ leaseTime })],
      // One attempt whose reply comes after its lease ran out grants nothing (a loaded machine can take
      // 10 ms): with a waitTime it tries again.
      ['tryLock', (lock, leaseTime) => lock.tryLock({ leaseTime, waitTime: 2_000 })],
      ['acquire', (lock, leaseTime) => lock.acquire({ leaseTime })],
      // Granted once its callback runs. A 10 ms lease may run out before the release on a loaded
      // machine, which the release must then report as lost (seen in CI: 26 ms for the pair).
      [
        'withLock',
        (lock, leaseTime) => {
          let granted = false;
          return lock
            .withLock(() => (granted = true), { leaseTime })
            .catch((error: unknown) => {
              if (granted && leaseTime === MIN_LEASE_MS && error instanceof LockLostError) return true;
              throw error;
            });
        },
      ],
    ];

    for (const [kind, get] of lockKinds) {
      for (const [how, take] of takes) {
        it(`${kind}.${how}`, async () => {
          const locks = server.lockClient();
          for (const leaseTime of TOO_SHORT) {
            await assert.rejects(
              Promise.resolve().then(() => take(get(locks), leaseTime)),
              (error: unknown) => error instanceof RangeError && error.message.includes('`leaseTime`'),
              `leaseTime ${leaseTime}`,
            );
          }
          const result = await within(outcome(take(get(locks), MIN_LEASE_MS)), 3_000, undefined);
          assert.ok(
            result?.ok,
            `leaseTime ${MIN_LEASE_MS}: ${result === undefined ? 'still pending after 3 s' : result.ok ? 'granted' : show(result.error)}`,
          );
          if (how === 'tryLock') assert.equal(result.value, true);
        });
      }
    }

    it('FencedLock.lockAndGetToken', async () => {
      const fenced = server.lockClient().getFencedLock(fresh());
      await assert.rejects(fenced.lockAndGetToken({ leaseTime: 2 }), RangeError);
      const token = await within(fenced.lockAndGetToken({ leaseTime: MIN_LEASE_MS }), 3_000, undefined);
      assert.equal(typeof token, 'bigint');
    });

    for (const argument of ['watchdogTimeout', 'maxLeaseTime']) {
      it(`new LockClient({ ${argument} }): refused below the minimum; at it, lock() is granted`, async () => {
        for (const value of TOO_SHORT) {
          assert.throws(
            () => new LockClient(server.client(), { [argument]: value }),
            (error: unknown) => error instanceof RangeError && error.message.includes(`\`${argument}\``),
          );
        }
        const lock = server.lockClient({ [argument]: MIN_LEASE_MS }).getLock(fresh());
        const result = await within(outcome(lock.lock()), 3_000, undefined);
        assert.ok(result?.ok, `lock(): ${result === undefined ? 'still pending after 3 s' : show(result)}`);
        await lock.unlock().catch(() => undefined);
      });
    }
  },
);
