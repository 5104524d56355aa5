import type { ClientContext } from '../context.js';
import type { LockBackend } from '../engine/lock-backend.js';
import { LockHandle } from '../engine/lock-handle.js';
import { LockNotHeldError } from '../errors.js';
import { lockKeys } from '../keys.js';
import type { Lock } from '../lock.js';
import type { LockOptions, TryLockOptions } from '../options.js';
import { fencedLockIssue, fencedLockToken } from '../scripts/index.js';
import { checkOptionalDuration, checkOptions, checkSignal } from '../validate.js';
import { reentrantBackend } from './lock.js';

/**
 * A lock that hands each new holder a fencing token: a number that strictly increases over every
 * acquisition of this name, from every client, even after the lock key expired. A resource that
 * remembers the highest token it has seen refuses writes carrying a lower one, so a holder that
 * stalled past its lease (GC pause, network partition) cannot overwrite its successor's work.
 */
export interface FencedLock extends Lock {
  /** Waits until acquired (like `lock()`) and returns this hold's token. */
  lockAndGetToken(options?: LockOptions): Promise<bigint>;
  /** Like `tryLock()`: the token when acquired, `null` when not (one attempt without `waitTime`). */
  tryLockAndGetToken(options?: TryLockOptions): Promise<bigint | null>;
  /** The current holder's token; rejects with `LockNotHeldError` when nobody holds the lock. */
  getToken(): Promise<bigint>;
}

/**
 * Fencing on the re-entrant lock: the same hash and waiter queue (so it excludes, and queues in one
 * order with, `getLock()` of the same name), plus a counter. The lock is taken as usual (queue,
 * hand-over); the token is then issued to the holder while it holds the lock.
 */
function fencedBackend(ctx: ClientContext, name: string): LockBackend {
  const base = reentrantBackend(ctx, name);
  const counter = lockKeys(ctx.options.keyPrefix, name).fence;
  return {
    ...base,
    async attempt(owner, leaseMs, deadline, place) {
      const taken = await base.attempt(owner, leaseMs, deadline, place);
      if (!taken.acquired) return taken;
      const token = await ctx.run(fencedLockIssue, [base.key, counter], [owner], deadline);
      // Lost in between (a lease shorter than a round trip, an expired hand-over): not acquired.
      if (token === null) return { acquired: false, retryIn: 1 };
      return { acquired: true, value: BigInt(token as string) };
    },
  };
}

class FencedLockHandle extends LockHandle implements FencedLock {
  async lockAndGetToken(options?: LockOptions): Promise<bigint> {
    const given = checkOptions<LockOptions>(options);
    const acquired = await this.acquireHold({
      waitTime: undefined,
      leaseTime: checkOptionalDuration(given.leaseTime, 'leaseTime', true),
      signal: checkSignal(given.signal),
    });
    // Without a waitTime the wait only ends acquired (or by rejecting).
    return acquired!.token!;
  }

  async tryLockAndGetToken(options?: TryLockOptions): Promise<bigint | null> {
    const given = checkOptions<TryLockOptions>(options);
    const acquired = await this.acquireHold({
      waitTime: checkOptionalDuration(given.waitTime, 'waitTime') ?? 0,
      leaseTime: checkOptionalDuration(given.leaseTime, 'leaseTime', true),
      signal: checkSignal(given.signal),
    });
    return acquired?.token ?? null;
  }

  async getToken(): Promise<bigint> {
    this.ctx.assertOpen();
    const token = await this.ctx.run(fencedLockToken, [this.backend.key], []);
    if (token === null)
      throw new LockNotHeldError(`Lock "${this.name}" is not held, so it has no current fencing token`);
    return BigInt(token as string);
  }
}

/** Creates the fenced lock returned by `LockClient.getFencedLock()`. */
export function createFencedLock(ctx: ClientContext, name: string): FencedLock {
  return new FencedLockHandle(ctx, fencedBackend(ctx, name));
}
