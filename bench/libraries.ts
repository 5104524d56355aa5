import type { Redis } from 'ioredis';
import { Mutex } from 'redis-semaphore';
import { Redlock } from './redlock.js';
import { LockClient, type Lock } from './latchkey.js';

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

export interface BenchLibrary {
  readonly name: string;
  open(redis: Redis): BenchSession;
}

function latchkey(name: string, pick: (client: LockClient, lockName: string) => Lock): BenchLibrary {
  return {
    name,
    open(redis) {
      const client = new LockClient(redis);
      return {
        lock(lockName) {
          // README usage: one handle per lock name and task, lock() / unlock() (the watchdog keeps it alive).
          const lock = pick(client, lockName);
          return { acquire: () => lock.lock(), release: () => lock.unlock() };
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

/** Every library available in this checkout, latchkey first. */
export function libraries(): BenchLibrary[] {
  return [latchkeyLock, latchkeyFairLock, redlock, redisSemaphore];
}

export function libraryByName(name: string): BenchLibrary {
  const found = libraries().find((library) => library.name === name);
  if (!found) throw new Error(`unknown library ${name}`);
  return found;
}
