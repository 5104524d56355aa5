/**
 * latchkey's other primitives as bench libraries: the leased locks scenario 1 runs beside the
 * watchdog's, and every primitive whose cost in Redis scenario 7 measures. Scenario 3 runs only
 * `libraries()` (libraries.ts), which its worker processes look up by name.
 */
import { latchkey, latchkeyFairLock, latchkeyLock, libraries, redisSemaphore, redlock } from './libraries.js';
import type { BenchLibrary } from './libraries.js';
import { LockClient } from './latchkey.js';

/** The lease scenario 1 gives the leased locks: no watchdog renews them. */
export const LEASE_MS = 30_000;

export const latchkeyLockLease = latchkey(
  'latchkey Lock (lease)',
  (client, name) => client.getLock(name),
  (lock) => lock.lock({ leaseTime: LEASE_MS }),
);
export const latchkeyFairLockLease = latchkey(
  'latchkey FairLock (lease)',
  (client, name) => client.getFairLock(name),
  (lock) => lock.lock({ leaseTime: LEASE_MS }),
);
/** A fenced lock is taken for its token: `lockAndGetToken()`. */
export const latchkeyFencedLockLease = latchkey(
  'latchkey FencedLock (lease)',
  (client, name) => client.getFencedLock(name),
  (lock) => lock.lockAndGetToken({ leaseTime: LEASE_MS }),
);
const latchkeyFencedLock = latchkey(
  'latchkey FencedLock',
  (client, name) => client.getFencedLock(name),
  (lock) => lock.lockAndGetToken(),
);
const readWriteWrite = latchkey('latchkey ReadWriteLock write', (client, name) =>
  client.getReadWriteLock(name).writeLock(),
);
const readWriteRead = latchkey('latchkey ReadWriteLock read', (client, name) =>
  client.getReadWriteLock(name).readLock(),
);
/** MultiLock over 3 member locks (on one server here: scenario 7 adds up Redis' time, wherever it is spent). */
const multiLock = latchkey('latchkey MultiLock (3)', (client, name) =>
  client.getMultiLock(...[0, 1, 2].map((i) => client.getLock(`${name}:${i}`))),
);
const redLock = latchkey('latchkey RedLock (5)', (client, name) =>
  client.getRedLock(...[0, 1, 2, 3, 4].map((i) => client.getLock(`${name}:${i}`))),
);

/** A semaphore of one permit: `acquire()` / `release()`, its permits set once per name. */
const semaphore: BenchLibrary = {
  name: 'latchkey Semaphore',
  open(redis) {
    const client = new LockClient(redis);
    return {
      lock(name) {
        const permits = client.getSemaphore(name);
        let set: Promise<unknown> | undefined;
        return {
          async acquire() {
            await (set ??= permits.trySetPermits(1));
            await permits.acquire();
          },
          release: () => permits.release(),
        };
      },
      close: () => client.shutdown(),
    };
  },
};

/** Scenario 1: the libraries of scenarios 2 and 3, and the locks taken with a lease. */
export function singleClientLibraries(): BenchLibrary[] {
  const [lock, fairLock, ...peers] = libraries();
  return [lock!, latchkeyLockLease, fairLock!, latchkeyFairLockLease, latchkeyFencedLockLease, ...peers];
}

/** Scenario 7: every latchkey primitive with a lock's shape, and the peers. */
export function costLibraries(): BenchLibrary[] {
  return [
    latchkeyLock,
    latchkeyLockLease,
    latchkeyFairLock,
    latchkeyFencedLock,
    readWriteWrite,
    readWriteRead,
    semaphore,
    multiLock,
    redLock,
    redlock,
    redisSemaphore,
  ];
}
