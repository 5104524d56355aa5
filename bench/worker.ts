/**
 * One contending process of scenario 3, forked by the benchmark (`node --import tsx bench/worker.ts`).
 * It waits for a `run` message, loops acquire → hold → release on one lock until the window ends,
 * and answers with its intervals on the shared clock (sharedNow).
 */
import * as diagnostics from 'node:diagnostics_channel';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { libraryByName } from './libraries.js';
import { sharedNow as now, type Interval } from './stats.js';

export interface RunMessage {
  readonly type: 'run';
  readonly worker: number;
  /** How many workers contend in this run. */
  readonly workers: number;
  readonly library: string;
  readonly lockName: string;
  readonly port: number;
  readonly holdMs: number;
  /** Shared-clock times: start asking at `start`, stop asking at `end`, give up waiting at `cutoff`. */
  readonly start: number;
  readonly end: number;
  readonly cutoff: number;
}

export interface DoneMessage {
  readonly type: 'done';
  readonly worker: number;
  readonly intervals: Interval[];
  /** Waits still unanswered at the cutoff (ms waited so far). */
  readonly pending: number[];
  /** Acquire calls that failed (the library gave up) and were retried. */
  readonly failures: number;
  /** latchkey only: how its acquisitions came, from its diagnostics channels (whole run). */
  readonly acquired?: AcquiredBy;
}

/** How a latchkey worker's acquisitions came. */
export interface AcquiredBy {
  /** The first attempt found the lock free: no wait. */
  readonly free: number;
  /** After a wait, from a hand-over message alone (provably in time, no round trip). */
  readonly byMessage: number;
  /** After a wait, from an attempt's reply (a late hand-over confirmed, or a retry on a timer). */
  readonly byReply: number;
}

/**
 * Counts the acquisitions of lock `name` by how they came, until the returned function is called.
 * A wait's 'start' is published only when the first attempt failed, so an acquisition without one
 * found the lock free.
 */
function countAcquisitions(name: string): () => AcquiredBy {
  const counts = { free: 0, byMessage: 0, byReply: 0 };
  let waiting = false;
  const onWait = (message: unknown): void => {
    const { name: of, phase } = message as { name: string; phase: string };
    if (of === name && phase === 'start') waiting = true;
  };
  const onAcquire = (message: unknown): void => {
    const { name: of, byMessage } = message as { name: string; byMessage?: boolean };
    if (of !== name) return;
    if (!waiting) counts.free++;
    else if (byMessage) counts.byMessage++;
    else counts.byReply++;
    waiting = false;
  };
  diagnostics.subscribe('latchkey:lock:wait', onWait);
  diagnostics.subscribe('latchkey:lock:acquire', onAcquire);
  return () => {
    diagnostics.unsubscribe('latchkey:lock:wait', onWait);
    diagnostics.unsubscribe('latchkey:lock:acquire', onAcquire);
    return counts;
  };
}

/** The notification floor: how long an SPUBLISH takes to reach another process (ms, shared clock). */
export interface ProbeMessage {
  readonly type: 'probe';
  readonly role: 'publish' | 'listen';
  readonly port: number;
  readonly channel: string;
  readonly count: number;
  readonly start: number;
  /** Pause between two publishes (ms): the listener sits idle that long, as a waiter does for a hold. */
  readonly spacingMs: number;
}

async function probe(message: ProbeMessage): Promise<number[]> {
  const redis = new Redis({ port: message.port, host: '127.0.0.1' });
  redis.on('error', () => undefined);
  const latencies: number[] = [];
  try {
    if (message.role === 'listen') {
      await redis.ssubscribe(message.channel);
      process.send?.({ type: 'listening' });
      await new Promise<void>((resolve) => {
        const timer = setTimeout(
          resolve,
          Math.max(0, message.start - now()) + message.count * (message.spacingMs + 10) + 2_000,
        );
        redis.on('smessage', (_channel: string, sent: string) => {
          latencies.push(now() - Number(sent));
          if (latencies.length === message.count) {
            clearTimeout(timer);
            resolve();
          }
        });
      });
    } else {
      await sleep(Math.max(0, message.start - now()));
      // Spaced like hand-overs of a hold: the listener is parked in between, as a waiter is, and
      // the publisher wakes from a timer, as a holder does at the end of its critical section.
      for (let i = 0; i < message.count; i++) {
        await sleep(message.spacingMs);
        await redis.spublish(message.channel, String(now()));
      }
    }
  } finally {
    redis.disconnect();
  }
  return latencies;
}

async function run(message: RunMessage): Promise<DoneMessage> {
  const redis = new Redis({ port: message.port, host: '127.0.0.1' });
  redis.on('error', () => undefined);
  const session = libraryByName(message.library).open(redis, message);
  const lock = session.lock(message.lockName);
  const counted = message.library.startsWith('latchkey') ? countAcquisitions(message.lockName) : undefined;
  const intervals: Interval[] = [];
  const pending: number[] = [];
  let failures = 0;
  await sleep(Math.max(0, message.start - now()));
  const ac = new AbortController();
  const cut = sleep(Math.max(0, message.cutoff - now()), 'cut' as const, { signal: ac.signal }).catch(
    () => 'cut' as const,
  );
  while (now() < message.end) {
    const want = now();
    let acquired = false;
    while (!acquired && now() < message.cutoff) {
      // The application's retry: a library that gives up (redlock's retryCount, redis-semaphore's
      // acquireTimeout) is asked again, so the wait measured is the whole time until the lock came.
      const attempt = lock.acquire().then(
        () => true,
        () => false,
      );
      const outcome = await Promise.race([attempt, cut]);
      if (outcome === 'cut') {
        // Still waiting at the cutoff: release if it ever comes, and report the wait so far.
        void attempt.then((got) => (got ? lock.release().catch(() => undefined) : undefined));
        break;
      }
      if (outcome) acquired = true;
      else failures++;
    }
    if (!acquired) {
      pending.push(now() - want);
      break;
    }
    const got = now();
    await sleep(message.holdMs);
    const released = now();
    intervals.push({ worker: message.worker, want, got, released });
    await lock.release().catch(() => failures++);
  }
  ac.abort();
  await session.close();
  redis.disconnect();
  const acquired = counted?.();
  return { type: 'done', worker: message.worker, intervals, pending, failures, ...(acquired ? { acquired } : {}) };
}

process.on('message', (message: RunMessage | ProbeMessage | { type: 'exit' }) => {
  if (message.type === 'exit') process.exit(0);
  else if (message.type === 'probe')
    void probe(message).then((latencies) => process.send?.({ type: 'probed', latencies }));
  else void run(message).then((done) => process.send?.(done));
});
process.send?.({ type: 'ready' });
