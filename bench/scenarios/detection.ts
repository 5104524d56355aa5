/**
 * Scenario 6: from a held lock's deletion, takeover or expiry to its lease signal aborting.
 */
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Redis } from 'ioredis';
import { lockKeys } from '../../src/keys.js';
import { LockClient, type LockLease } from '../latchkey.js';
import { percentile } from '../stats.js';

export type Fault = 'deletion' | 'takeover' | 'expiry';
export const FAULTS: readonly Fault[] = ['deletion', 'takeover', 'expiry'];

/** How the holder learns of a loss: the client's default, or renewal alone (when the option exists). */
export type Detection = 'default' | 'renewal';

/** One kind of fault against one client's held locks. */
export interface DetectionRow {
  fault: Fault;
  /** Locks given this fault and lost by it. */
  locks: number;
  /**
   * Expiry only: locks whose renewal came within the 1 ms before their key expired and reset the
   * TTL, so that they were never lost (left out of `locks`; runs before 2026-11-25 05:00 lack it).
   */
  survived?: number;
  /** Those whose signal aborted before the scenario ended. */
  detected: number;
  /** Fault to abort (ms), over the detected ones. */
  p50: number;
  p99: number;
  max: number;
}

/**
 * Scenario 6, beside the faults: how soon a waiter queued behind a holder that stopped renewing
 * (a crash) gets the lock once the key expires. Its own timer, set from the TTL its attempts
 * read, wakes it; compare with the expiry row of the default detection, which is when Redis'
 * expiry notification reaches a client that tracks the key.
 */
export interface WaiterWakeRow {
  trials: number;
  /** Those whose waiter got the lock. */
  acquired: number;
  /** From the key's expiry to the waiter's lock() resolving (ms). */
  p50: number;
  p99: number;
  max: number;
}

/** Scenario 6, one client configuration. */
export interface DetectionRun {
  library: string;
  detection: Detection;
  watchdogTimeout: number;
  rows: DetectionRow[];
  /** Takeover faults in which the other client got the lock (runs before 2026-11-25 05:00 lack it). */
  takenOver?: number;
  /** Locks held alongside with no fault, whose signal must never abort. */
  controls: number;
  falseAlarms: number;
}

export interface DetectionOptions {
  /** Locks per fault kind. */
  readonly perFault: number;
  readonly controls: number;
  /** Left out: the client's default (30 s). */
  readonly watchdogTimeout?: number;
}

/** TTL the expiry fault gives a held key: it expires at once, but as an expiry, not a DEL. */
const EXPIRE_IN_MS = 1;

/** Well past the first read of every hold (50 ms after it was taken, then one batched call). */
const TRACKED_BY_MS = 500;

/**
 * Holds `perFault` locks per fault kind plus `controls` untouched ones on one client, then hits
 * each faulted lock once, at a moment drawn uniformly over one renewal period (so that detection
 * by renewal is sampled at every phase of its period), from other connections:
 * - deletion: DEL of the lock key, as `unlock --force` does;
 * - takeover: DEL and, right behind it on the same connection, another client's tryLock;
 * - expiry: PEXPIRE to 1 ms (a SIGSTOP past the lease would take the default 30 s lease and
 *   measure only when the process was resumed).
 * Measures the time from the fault (sent; for expiry, when its TTL ran out) to the lease signal
 * aborting, in this process on one clock.
 */
export async function lossDetection(
  connect: () => Redis,
  detection: Detection,
  options: DetectionOptions,
  progress: (line: string) => void,
): Promise<DetectionRun | undefined> {
  // Untyped: `lossDetection` is an option this latchkey may not have yet (the constructor says so).
  const clientOptions: Record<string, unknown> = {};
  if (options.watchdogTimeout !== undefined) clientOptions.watchdogTimeout = options.watchdogTimeout;
  if (detection === 'renewal') clientOptions.lossDetection = 'renewal';
  let holder: LockClient;
  try {
    holder = new LockClient(connect(), clientOptions);
  } catch (error) {
    // This latchkey has no such option yet: the caller reports the row as not measured.
    if (detection !== 'default' && error instanceof TypeError) return undefined;
    throw error;
  }
  const injector = connect();
  const takerRedis = connect();
  const taker = new LockClient(takerRedis);
  const tag = `bench:detect:${detection}:${Date.now()}`;
  try {
    const names = (kind: string, count: number): string[] =>
      Array.from({ length: count }, (_, i) => `${tag}:${kind}:${i}`);
    const faulted = FAULTS.map((fault) => ({ fault, names: names(fault, options.perFault) }));
    const all = [...faulted.flatMap((group) => group.names), ...names('control', options.controls)];
    const leases = new Map<string, LockLease>();
    for (let i = 0; i < all.length; i += 500)
      await Promise.all(
        all.slice(i, i + 500).map(async (name) => leases.set(name, await holder.getLock(name).acquire())),
      );
    const aborted = new Map<string, number>();
    for (const [name, lease] of leases)
      lease.signal.addEventListener('abort', () => aborted.set(name, performance.now()), { once: true });

    // Faults start once every hold is tracked: a hold is first read 50 ms after it was taken, and
    // a fault before that read is told by the read itself (the README states that window apart).
    await sleep(TRACKED_BY_MS);

    const period = holder.options.watchdogTimeout / 3;
    const faultAt = new Map<string, number>();
    const takeovers: Promise<boolean>[] = [];
    const hit = (fault: Fault, name: string): void => {
      const key = lockKeys(holder.options.keyPrefix, name).hash;
      const sent = performance.now();
      if (fault === 'deletion') void injector.del(key);
      else if (fault === 'takeover') {
        // Queued on one connection: Redis runs the taker's attempt right after the DEL.
        void takerRedis.del(key);
        takeovers.push(
          taker
            .getLock(name)
            .tryLock()
            .catch(() => false),
        );
      } else void injector.pexpire(key, EXPIRE_IN_MS);
      faultAt.set(name, fault === 'expiry' ? sent + EXPIRE_IN_MS : sent);
    };
    const started = performance.now();
    const timers = faulted.flatMap(({ fault, names: group }) =>
      group.map((name) => sleep(Math.random() * period).then(() => hit(fault, name))),
    );
    await Promise.all(timers);
    progress(`  ${detection}: ${faultAt.size} faults in ${Math.round(performance.now() - started)} ms; waiting`);
    // Renewal notices a fault within one period; a loaded machine gets a few seconds more.
    const giveUpAt = performance.now() + period + 3_000;
    while (performance.now() < giveUpAt && [...faultAt.keys()].some((name) => !aborted.has(name))) await sleep(20);

    const stillThere = async (name: string): Promise<boolean> =>
      (await injector.exists(lockKeys(holder.options.keyPrefix, name).hash)) === 1;
    const rows: DetectionRow[] = [];
    for (const { fault, names: group } of faulted) {
      // Nobody else writes an expiring key: one still there was renewed in time, not lost.
      const survivors = new Set<string>();
      if (fault === 'expiry')
        for (const name of group) if (!aborted.has(name) && (await stillThere(name))) survivors.add(name);
      const lost = group.filter((name) => !survivors.has(name));
      const latencies = lost.filter((name) => aborted.has(name)).map((name) => aborted.get(name)! - faultAt.get(name)!);
      rows.push({
        fault,
        locks: lost.length,
        ...(fault === 'expiry' ? { survived: survivors.size } : {}),
        detected: latencies.length,
        p50: percentile(latencies, 50),
        p99: percentile(latencies, 99),
        max: latencies.length ? Math.max(...latencies) : Number.NaN,
      });
    }
    const takenOver = (await Promise.all(takeovers)).filter(Boolean).length;
    const controls = all.filter((name) => !faultAt.has(name));
    const falseAlarms = controls.filter((name) => aborted.has(name)).length;
    await Promise.all(
      controls.map((name) =>
        leases
          .get(name)!
          .release()
          .catch(() => undefined),
      ),
    );
    return {
      library: 'latchkey Lock',
      detection,
      watchdogTimeout: holder.options.watchdogTimeout,
      rows,
      takenOver,
      controls: controls.length,
      falseAlarms,
    };
  } finally {
    await holder.shutdown();
    await taker.shutdown();
  }
}

/**
 * `trials` holders (each its own client, renewing every 300 ms) stop renewing at a random moment
 * (shutdown(), as a crashed process stops), while a waiter on another client is queued behind
 * each; from the key's expiry (now + its PTTL, read right after the holder stopped) to the
 * waiter's lock() resolving.
 */
export async function waiterAfterExpiry(connect: () => Redis, trials: number): Promise<WaiterWakeRow> {
  const admin = connect();
  const waiters = new LockClient(connect());
  const tag = `bench:expiry-wake:${Date.now()}`;
  const latencies: number[] = [];
  try {
    const trial = async (i: number): Promise<void> => {
      const name = `${tag}:${i}`;
      const holder = new LockClient(connect(), { watchdogTimeout: 900, lossDetection: 'renewal' });
      await holder.getLock(name).lock();
      const handle = waiters.getLock(name);
      const acquired = handle.lock().then(() => performance.now());
      await sleep(100 + Math.random() * 600);
      await holder.shutdown();
      const before = performance.now();
      const ttl = await admin.pttl(lockKeys(waiters.options.keyPrefix, name).hash);
      const expiresAt = before + Math.max(0, ttl);
      latencies.push((await acquired) - expiresAt);
      await handle.unlock();
    };
    for (let i = 0; i < trials; i += 10)
      await Promise.all(Array.from({ length: Math.min(10, trials - i) }, (_, j) => trial(i + j)));
    return {
      trials,
      acquired: latencies.length,
      p50: percentile(latencies, 50),
      p99: percentile(latencies, 99),
      max: Math.max(...latencies),
    };
  } finally {
    await waiters.shutdown();
    admin.disconnect();
  }
}
