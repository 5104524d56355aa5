/**
 * Scenario 8, waiters: many waiters queued on one lock, or spread over 100, while another client
 * holds them; then the holders let go and every waiter takes its lock once, holds it 0 ms and
 * releases it. Measured: client heap and Redis memory per waiter while they wait, and while they
 * drain, hand-overs per second, the time to drain and what each hand-over cost Redis. The peers'
 * waiters poll; they run with a cap on the drain, and a run that hits it says so.
 */
import * as diagnostics from 'node:diagnostics_channel';
import { setMaxListeners } from 'node:events';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Redis } from 'ioredis';
import { Mutex } from 'redis-semaphore';
import { LockClient } from '../latchkey.js';
import { Redlock } from '../redlock.js';
import { commandStats, countSentCommands, heapAfterGc, sentCost, settledMemory, sweep } from '../redis-counters.js';

export interface WaitersRow {
  library: string;
  waiters: number;
  /** Over how many locks they are spread (evenly). */
  locks: number;
  /** Client heap per waiter while they wait (bytes, after a forced GC). */
  clientBytes: number;
  /** Redis `used_memory` per waiter while they wait (bytes). */
  redisBytes: number;
  /** Waiters that took and released their lock before the cap. */
  drained: number;
  /** From the holders' release to the last waiter's release, or to the cap (ms). */
  drainMs: number;
  /** The drain stopped at the cap with waiters left. */
  capped: boolean;
  handOversPerSec: number;
  /** Per hand-over during the drain: scripts and plain commands sent, and their time in Redis (µs). */
  scripts: number;
  plain: number;
  redisUs: number;
  /** Acquisitions the library gave up on (the waiter asked again). */
  failures: number;
}

export interface WaitersOptions {
  /** latchkey's numbers of waiters, smallest first. */
  readonly sizes: readonly number[];
  /** The peers' number of waiters. */
  readonly peerWaiters: number;
  /** The layouts: waiters on 1 lock, spread over 100. */
  readonly layouts: readonly number[];
  /** A drain stops here. */
  readonly capMs: number;
  /** The peers' waiters poll: how long they ask before memory is read. */
  readonly askMs: number;
}

/** How one library queues `waiters` on `names` and drains them; the measuring is the same for all. */
interface Contender {
  readonly library: string;
  /** Takes every lock of `names` with the holder's connection. */
  hold(names: readonly string[]): Promise<() => Promise<void>>;
  /** Starts waiter `i` on `name`; resolves when it has taken and released its lock, or gave up. */
  wait(name: string, onFailure: () => void): Promise<boolean>;
  /** Resolves once every waiter has asked. */
  asked(waiters: number): Promise<void>;
  /** Makes whatever still waits give up. */
  stop(): void | Promise<void>;
  /** Closes the connections, once every waiter is done. */
  close(): void;
}

/** How long latchkey's waiters may take to all start waiting. */
const ASK_CAP_MS = 30_000;

/** True when `promise` settles within `ms`; the timer does not outlive the race. */
async function within(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => (timer = setTimeout(resolve, ms, false)));
  try {
    return await Promise.race([promise.then(() => true), late]);
  } finally {
    clearTimeout(timer);
  }
}

async function drain(
  admin: Redis,
  contender: Contender,
  waiters: number,
  locks: number,
  capMs: number,
): Promise<WaitersRow> {
  const names = Array.from({ length: locks }, (_, i) => `bench:waiters:${contender.library}:${waiters}:${locks}:${i}`);
  let drained = 0;
  let failures = 0;
  let last = 0;
  let stopping = false;
  try {
    const release = await contender.hold(names);
    const heapBefore = heapAfterGc();
    const usedBefore = await settledMemory(admin);
    const all = Promise.all(
      Array.from({ length: waiters }, (_, i) =>
        contender
          .wait(names[i % locks]!, () => void failures++)
          .then(
            (took) => {
              if (!took) return;
              drained++;
              last = performance.now();
            },
            (error: unknown) => {
              // A release refused because the cap shut the client down is the cap's doing.
              if (!stopping) throw error;
            },
          ),
      ),
    );
    all.catch(() => undefined); // awaited below; a failure must not go unhandled before then
    await contender.asked(waiters);
    const redisBytes = ((await settledMemory(admin)) - usedBefore) / waiters;
    const clientBytes = (heapAfterGc() - heapBefore) / waiters;
    await admin.config('RESETSTAT');
    const counted = countSentCommands();
    const started = performance.now();
    await release();
    const capped = !(await within(all, capMs)) && drained < waiters;
    const atCap = drained;
    const drainMs = (capped ? performance.now() : last) - started;
    const cost = sentCost(await commandStats(admin), counted());
    stopping = true;
    await contender.stop();
    await all;
    const per = (value: number): number => value / Math.max(1, atCap);
    return {
      library: contender.library,
      waiters,
      locks,
      clientBytes,
      redisBytes,
      drained: atCap,
      drainMs,
      capped,
      handOversPerSec: (atCap * 1000) / drainMs,
      scripts: per(cost.scripts),
      plain: per(cost.plain),
      redisUs: per(cost.scriptUsec + cost.plainUsec),
      failures,
    };
  } finally {
    stopping = true;
    await contender.stop();
    contender.close();
    await sweep(admin, '*bench:waiters*');
  }
}

/** latchkey: the holders on one client, every waiter a Lock handle of another. */
function latchkey(open: () => Redis): Contender {
  const [holderConnection, waiterConnection] = [open(), open()];
  const holder = new LockClient(holderConnection);
  const client = new LockClient(waiterConnection);
  let started = 0;
  const onWait = (message: unknown): void => {
    if ((message as { phase: string }).phase === 'start') started++;
  };
  return {
    library: 'latchkey Lock',
    async hold(names) {
      const locks = names.map((name) => holder.getLock(name));
      await Promise.all(locks.map((lock) => lock.lock()));
      // Counts the waits that started (the first attempt found the lock held), while they queue.
      diagnostics.subscribe('latchkey:lock:wait', onWait);
      return async () => void (await Promise.all(locks.map((lock) => lock.unlock())));
    },
    async wait(name) {
      const lock = client.getLock(name);
      try {
        await lock.lock();
      } catch {
        return false; // the client shut down at the cap
      }
      await lock.unlock();
      return true;
    },
    async asked(waiters) {
      const until = performance.now() + ASK_CAP_MS;
      while (started < waiters && performance.now() < until) await sleep(20);
      diagnostics.unsubscribe('latchkey:lock:wait', onWait);
    },
    async stop() {
      diagnostics.unsubscribe('latchkey:lock:wait', onWait);
      await Promise.all([client.shutdown(), holder.shutdown()]);
    },
    close() {
      holderConnection.disconnect();
      waiterConnection.disconnect();
    },
  };
}

/** redis-semaphore: a Mutex per waiter, polling every 10 ms (its default) for up to 10 s, asked again. */
function redisSemaphore(open: () => Redis, askMs: number): Contender {
  const [holderConnection, waiterConnection] = [open(), open()];
  const aborted = new AbortController();
  // Every polling waiter listens to it: thousands, on purpose.
  setMaxListeners(0, aborted.signal);
  const onLockLost = (): void => undefined;
  return {
    library: 'redis-semaphore',
    async hold(names) {
      const mutexes = names.map((name) => new Mutex(holderConnection, name, { onLockLost }));
      await Promise.all(mutexes.map((mutex) => mutex.acquire()));
      return async () => void (await Promise.all(mutexes.map((mutex) => mutex.release())));
    },
    async wait(name, onFailure) {
      while (!aborted.signal.aborted) {
        const mutex = new Mutex(waiterConnection, name, { onLockLost });
        try {
          await mutex.acquire(aborted.signal);
        } catch {
          if (!aborted.signal.aborted) onFailure();
          continue;
        }
        await mutex.release();
        return true;
      }
      return false;
    },
    asked: () => sleep(askMs),
    stop: () => aborted.abort(),
    close() {
      holderConnection.disconnect();
      waiterConnection.disconnect();
    },
  };
}

/** redlock: `acquire` with its default retries (10, 200 ms apart), asked again when it gives up. */
function redlock(open: () => Redis, askMs: number): Contender {
  const [holderConnection, waiterConnection] = [open(), open()];
  const [holder, waiting] = [new Redlock([holderConnection]), new Redlock([waiterConnection])];
  for (const instance of [holder, waiting]) instance.on('error', () => undefined);
  let stopped = false;
  return {
    library: 'redlock',
    async hold(names) {
      const held = await Promise.all(names.map((name) => holder.acquire([name], 60_000)));
      return async () => void (await Promise.all(held.map((lock) => lock.release())));
    },
    async wait(name, onFailure) {
      while (!stopped) {
        try {
          const lock = await waiting.acquire([name], 5_000);
          await lock.release();
          return true;
        } catch {
          if (!stopped) onFailure();
        }
      }
      return false;
    },
    asked: () => sleep(askMs),
    stop: () => void (stopped = true),
    close() {
      holderConnection.disconnect();
      waiterConnection.disconnect();
    },
  };
}

/** Scenario 8, waiters: latchkey at every size and layout, then the peers at `peerWaiters`. */
export async function waitersAtScale(
  open: () => Redis,
  admin: Redis,
  options: WaitersOptions,
  progress: (line: string) => void,
): Promise<WaitersRow[]> {
  const rows: WaitersRow[] = [];
  const runs = [
    ...options.layouts.flatMap((locks) => options.sizes.map((waiters) => ({ make: latchkey, waiters, locks }))),
    ...[redisSemaphore, redlock].flatMap((make) =>
      options.layouts.map((locks) => ({ make, waiters: options.peerWaiters, locks })),
    ),
  ];
  for (const { make, waiters, locks } of runs) {
    const row = await drain(admin, make(open, options.askMs), waiters, locks, options.capMs);
    rows.push(row);
    progress(
      `  ${row.library}, ${row.waiters.toLocaleString('en-US')} waiters on ${row.locks} lock${row.locks > 1 ? 's' : ''}: ` +
        `client ${Math.round(row.clientBytes)} B and Redis ${Math.round(row.redisBytes)} B per waiter; ` +
        `${row.drained} drained in ${Math.round(row.drainMs)} ms${row.capped ? ' (cap reached)' : ''}, ` +
        `${Math.round(row.handOversPerSec)} hand-overs/s, ${row.scripts.toFixed(2)} scripts and ` +
        `${row.redisUs.toFixed(1)} µs in Redis per hand-over`,
    );
  }
  return rows;
}
