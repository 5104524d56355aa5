/**
 * The libraries the benchmark compares (latchkey, redlock, redis-semaphore), each used as its
 * README shows, behind one small interface.
 */
import type { Redis } from 'ioredis';
import { Mutex } from 'redis-semaphore';
import { Redlock } from './redlock.js';
import { LockClient, type Lock } from './latchkey.js';
import { HAND_OVER_RING } from './names.js';

/** One lock name as a library hands it out: take it, give it back. */
export interface BenchLock {
  acquire(): Promise<void>;
  release(): Promise<void>;
}

/** A library under test, opened on one ioredis client. */
export interface BenchSession {
  lock(name: string): BenchLock;
  close(): Promise<void>;
}

/** Which of the contending processes opens the session, and how many there are (scenario 3). */
export interface Seat {
  readonly worker: number;
  readonly workers: number;
}

export interface BenchLibrary {
  readonly name: string;
  /** `seat`: given in scenario 3, where each contending process opens its own session. */
  open(redis: Redis, seat?: Seat): BenchSession;
}

/**
 * A latchkey lock as a bench library: `pick` gets the handle, `take` acquires it (by default
 * `lock()`, kept alive by the watchdog).
 */
export function latchkey<L extends Lock>(
  name: string,
  pick: (client: LockClient, lockName: string) => L,
  take: (lock: L) => Promise<unknown> = (lock) => lock.lock(),
): BenchLibrary {
  return {
    name,
    open(redis) {
      const client = new LockClient(redis);
      return {
        lock(lockName) {
          // README usage: one handle per lock name and task, lock() / unlock().
          const lock = pick(client, lockName);
          return {
            // The value (a FencedLock's token) is not read: no wrapper of its own around the call.
            acquire: () => take(lock) as Promise<void>,
            release: () => lock.unlock(),
          };
        },
        close: () => client.shutdown(),
      };
    },
  };
}

/** latchkey's plain re-entrant Lock. */
export const latchkeyLock = latchkey('latchkey Lock', (client, name) => client.getLock(name));

/** latchkey's FairLock (strict request order across processes). */
export const latchkeyFairLock = latchkey('latchkey FairLock', (client, name) => client.getFairLock(name));

/** redlock 5 as its README shows it: one Redlock over the client, default retry settings, acquire/release. */
export const redlock: BenchLibrary = {
  name: 'redlock',
  open(redis) {
    const instance = new Redlock([redis]);
    // Redlock reports failed lock attempts as 'error' events too; the caller sees the rejection.
    instance.on('error', () => undefined);
    return {
      lock(name) {
        let held: Awaited<ReturnType<Redlock['acquire']>> | undefined;
        return {
          async acquire() {
            held = await instance.acquire([name], 5_000);
          },
          async release() {
            const current = held;
            held = undefined;
            await current?.release();
          },
        };
      },
      close: () => Promise.resolve(),
    };
  },
};

/** redis-semaphore's Mutex as its README shows it: a Mutex per critical section, default options. */
export const redisSemaphore: BenchLibrary = {
  name: 'redis-semaphore',
  open(redis) {
    return {
      lock(name) {
        let mutex: Mutex | undefined;
        return {
          async acquire() {
            // Its default onLockLost throws from a timer; a late refresh must not crash the whole run.
            mutex = new Mutex(redis, name, { onLockLost: () => undefined });
            await mutex.acquire();
          },
          async release() {
            const current = mutex;
            mutex = undefined;
            await current?.release();
          },
        };
      },
      close: () => Promise.resolve(),
    };
  },
};

/**
 * Not a lock: the least that any lock which never lets the releasing process barge must do, run
 * as one so that scenario 3 measures what this machine allows such a lock. The turn goes round the
 * workers in a fixed ring: each waits for a message on its own channel, holds, and passes the turn
 * on with one SPUBLISH to the next (sharded pub/sub, as latchkey's hand-overs): one notification
 * per hand-over, no script, no lock state, no queue. Every wait spans the other W-1 workers'
 * turns, as it must for a lock where a process that asks again queues behind those waiting.
 */
export const handOverRing: BenchLibrary = {
  name: HAND_OVER_RING,
  open(redis, seat) {
    if (!seat) throw new Error('the hand-over ring runs only across worker processes (scenario 3)');
    const subscriber = redis.duplicate();
    subscriber.on('error', () => undefined);
    return {
      lock(name) {
        const channel = (worker: number): string => `${name}:ring:${worker}`;
        let turns = seat.worker === 0 ? 1 : 0; // the first worker starts with the turn
        let wake: (() => void) | undefined;
        subscriber.on('smessage', () => {
          const resolve = wake;
          wake = undefined;
          if (resolve) resolve();
          else turns++;
        });
        const subscribed = subscriber.ssubscribe(channel(seat.worker));
        return {
          async acquire() {
            await subscribed;
            if (turns > 0) turns--;
            else await new Promise<void>((resolve) => (wake = resolve));
          },
          async release() {
            await redis.spublish(channel((seat.worker + 1) % seat.workers), '1');
          },
        };
      },
      close: async () => {
        await subscriber.quit().catch(() => subscriber.disconnect());
      },
    };
  },
};

/** Every library available in this checkout, latchkey first. */
export function libraries(): BenchLibrary[] {
  return [latchkeyLock, latchkeyFairLock, redlock, redisSemaphore];
}

export function libraryByName(name: string): BenchLibrary {
  const found = [...libraries(), handOverRing].find((library) => library.name === name);
  if (!found) throw new Error(`unknown library ${name}`);
  return found;
}
