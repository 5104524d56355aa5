/**
 * Scenario 8, held locks: many locks held by one client at once (with the watchdog, and with a
 * lease), and the peers holding as many. Per lock: the client's heap (after a forced GC, the
 * handles the application keeps included) and Redis' `used_memory`; per renewal period: the
 * renewal calls and their time in Redis. Run at two sizes, so that what must not grow per lock
 * can be seen not to.
 */
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Redis } from 'ioredis';
import { Mutex } from 'redis-semaphore';
import { LockClient, LockLostError, type Lock } from '../latchkey.js';
import { Redlock } from '../redlock.js';
import {
  commandStats,
  countSentCommands,
  heapAfterGc,
  sentCost,
  settledMemory,
  sweep,
  usedMemory,
  type SentCost,
} from '../redis-counters.js';
import { inChunks } from './watchdog.js';

export interface HeldRow {
  library: string;
  locks: number;
  /** The period the renewal figures are per (ms): the library's renewal period, or latchkey's where none renews. */
  periodMs: number;
  /** False for locks taken with a lease, which nothing renews. */
  renews: boolean;
  /** Time to take them all, 500 at a time (s). */
  takeSec: number;
  /** Client heap per held lock, its handle included (bytes, after a forced GC). */
  clientBytes: number;
  /** Redis `used_memory` per held lock (bytes). */
  redisBytes: number;
  /** Renewal scripts sent per period (round trips). */
  renewalScripts: number;
  /** Plain commands sent beside them per period (latchkey re-tracking the renewed keys). */
  renewalPlain: number;
  /** Redis time of both per period (µs). */
  renewalUs: number;
  /** latchkey's budget: one renewal call per 1,000 held locks per period. */
  budget: number;
  /** Locks reported lost (a renewal too late for its lease on a loaded machine). */
  lost: number;
}

export interface HeldOptions {
  /** latchkey's sizes (locks held), smallest first. */
  readonly sizes: readonly number[];
  /** How many locks the peers hold. */
  readonly peerLocks: number;
  /** latchkey's watchdogTimeout: it renews every third of it. */
  readonly watchdogTimeout: number;
  /** latchkey's periods counted. */
  readonly periods: number;
  /** The peers' lease: they renew each lock on its own timer, one command each. */
  readonly peerLeaseMs: number;
}

/** Well past the loss watch's first read of every hold. */
const FIRST_READS_MS = 500;

/** The lease of the leased rows: longer than any run, so that nothing expires while counted. */
const LONG_LEASE_MS = 600_000;

/** Renewals counted over `ms`, from CONFIG RESETSTAT on. */
async function countOver(admin: Redis, ms: number): Promise<SentCost> {
  await admin.config('RESETSTAT');
  const counted = countSentCommands();
  await sleep(ms);
  const sent = counted();
  return sentCost(await commandStats(admin), sent);
}

/** Memory and renewals while `count` locks are held: `hold` takes them and answers how to give them back. */
async function holding(
  admin: Redis,
  library: string,
  count: number,
  periodMs: number,
  periods: number,
  warmUpMs: number,
  hold: () => Promise<{ takeSec: number; release: () => Promise<number> }>,
): Promise<HeldRow> {
  const heapBefore = heapAfterGc();
  const { takeSec, release } = await hold();
  await sleep(warmUpMs);
  const cost = await countOver(admin, periodMs * periods);
  const clientBytes = (heapAfterGc() - heapBefore) / count;
  const usedHolding = await usedMemory(admin);
  const lost = await release();
  // Redis' memory without the locks is read after they are gone, with the same connections open
  // as while they were held: a baseline read before would include the new connections' buffers,
  // which Redis trims once they idle, and the last run's leftovers expiring.
  await sweep(admin, '*bench:scale*');
  const redisBytes = (usedHolding - (await settledMemory(admin))) / count;
  return {
    library,
    locks: count,
    periodMs,
    renews: true,
    takeSec,
    clientBytes,
    redisBytes,
    renewalScripts: cost.scripts / periods,
    renewalPlain: cost.plain / periods,
    renewalUs: (cost.scriptUsec + cost.plainUsec) / periods,
    budget: Math.ceil(count / 1_000),
    lost,
  };
}

const seconds = (since: number): number => (performance.now() - since) / 1000;

/** latchkey: `count` Locks on one client, with the watchdog or with a lease. */
async function latchkeyHeld(
  open: () => Redis,
  admin: Redis,
  count: number,
  lease: boolean,
  options: HeldOptions,
): Promise<HeldRow> {
  const connection = open();
  const client = new LockClient(connection, { watchdogTimeout: options.watchdogTimeout });
  const take = (lock: Lock): Promise<void> => (lease ? lock.lock({ leaseTime: LONG_LEASE_MS }) : lock.lock());
  try {
    // Scripts loaded, tracking links made: no cost per lock.
    const warm = client.getLock('bench:scale:warm');
    await take(warm);
    await warm.unlock();
    const periodMs = options.watchdogTimeout / 3;
    const library = lease ? 'latchkey Lock (lease)' : 'latchkey Lock';
    // With the watchdog, counting starts after the third renewal round (the first loads the
    // renewal script, and holds taken over more than half a period share their rounds within
    // two more: neither is a cost per period); a leased lock has no renewal to wait for, only the loss
    // watch's first read of each hold (50 ms after it was taken), which is no cost per period.
    const [periods, warmUpMs] = lease ? [1, FIRST_READS_MS] : [options.periods, periodMs * 3.5];
    const row = await holding(admin, library, count, periodMs, periods, warmUpMs, async () => {
      const started = performance.now();
      const locks = Array.from({ length: count }, (_, i) => client.getLock(`bench:scale:${lease}:${count}:${i}`));
      await inChunks(locks, take);
      return {
        takeSec: seconds(started),
        async release() {
          let lost = 0;
          await inChunks(locks, (lock) =>
            lock.unlock().catch((error: unknown) => {
              if (!(error instanceof LockLostError)) throw error;
              lost++;
            }),
          );
          return lost;
        },
      };
    });
    return { ...row, renews: !lease };
  } finally {
    await client.shutdown();
    connection.disconnect();
  }
}

/**
 * redis-semaphore: `count` Mutexes, each refreshing itself every 0.8 x its lease. A window of one
 * period holds one refresh of each; it opens half a period after the last was taken, away from a
 * burst of refreshes of locks taken together.
 */
async function redisSemaphoreHeld(open: () => Redis, admin: Redis, count: number, leaseMs: number): Promise<HeldRow> {
  const connection = open();
  let lost = 0;
  const onLockLost = (): void => void lost++;
  try {
    // Its refresh script loaded by one refresh first: every refresh of the window is then one EVALSHA.
    const warm = new Mutex(connection, 'bench:scale-rs:warm', { lockTimeout: 500, refreshInterval: 50, onLockLost });
    await warm.acquire();
    await sleep(100);
    await warm.release();
    const periodMs = leaseMs * 0.8;
    return await holding(admin, 'redis-semaphore', count, periodMs, 1, periodMs / 2, async () => {
      const started = performance.now();
      const mutexes = Array.from(
        { length: count },
        (_, i) => new Mutex(connection, `bench:scale-rs:${i}`, { lockTimeout: leaseMs, onLockLost }),
      );
      await inChunks(mutexes, (mutex) => mutex.acquire());
      return {
        takeSec: seconds(started),
        async release() {
          await inChunks(mutexes, (mutex) => mutex.release().catch(() => undefined));
          return lost;
        },
      };
    });
  } finally {
    connection.disconnect();
  }
}

/** redlock: `count` routines in `using`, each extended 500 ms before its lease runs out. */
async function redlockHeld(open: () => Redis, admin: Redis, count: number, leaseMs: number): Promise<HeldRow> {
  const connection = open();
  const instance = new Redlock([connection]);
  instance.on('error', () => undefined);
  try {
    // Its extension script loaded by one extension first (due 500 ms before the 700 ms lease ends).
    await instance.using(['bench:scale-rl:warm'], 700, () => sleep(250));
    const periodMs = leaseMs - 500;
    return await holding(admin, 'redlock', count, periodMs, 1, periodMs / 2, async () => {
      const started = performance.now();
      let finish: () => void = () => undefined;
      const done = new Promise<void>((resolve) => (finish = resolve));
      const routines: Promise<void>[] = [];
      // Entered 500 at a time, as the others take theirs: a routine holds its lock until `done`.
      await inChunks(
        Array.from({ length: count }, (_, i) => i),
        (i) =>
          new Promise<void>((entered) => {
            routines.push(
              instance.using([`bench:scale-rl:${i}`], leaseMs, async () => {
                entered();
                await done;
              }),
            );
          }),
      );
      return {
        takeSec: seconds(started),
        async release() {
          finish();
          const settled = await Promise.allSettled(routines);
          return settled.filter((outcome) => outcome.status === 'rejected').length;
        },
      };
    });
  } finally {
    connection.disconnect();
  }
}

/** Scenario 8, held locks: latchkey at every size (watchdog, lease), then the peers at `peerLocks`. */
export async function heldAtScale(
  open: () => Redis,
  admin: Redis,
  options: HeldOptions,
  progress: (line: string) => void,
): Promise<HeldRow[]> {
  const rows: HeldRow[] = [];
  const report = (row: HeldRow): void => {
    rows.push(row);
    progress(
      `  ${row.library}, ${row.locks.toLocaleString('en-US')} held: client ${Math.round(row.clientBytes)} B and ` +
        `Redis ${Math.round(row.redisBytes)} B per lock; per ${Math.round(row.periodMs)} ms: ` +
        `${row.renewalScripts.toFixed(1)} renewal calls, ${row.renewalPlain.toFixed(1)} plain, ` +
        `${Math.round(row.renewalUs)} µs in Redis${row.lost > 0 ? `; ${row.lost} lost` : ''}`,
    );
  };
  for (const lease of [false, true])
    for (const count of options.sizes) report(await latchkeyHeld(open, admin, count, lease, options));
  report(await redisSemaphoreHeld(open, admin, options.peerLocks, options.peerLeaseMs));
  report(await redlockHeld(open, admin, options.peerLocks, options.peerLeaseMs));
  return rows;
}
