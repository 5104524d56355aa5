import { now } from '../clock.js';
import type { ClientContext } from '../context.js';
import { KeyLock } from '../engine/key-lock.js';
import type { LockBackend } from '../engine/lock-core.js';
import { LockHandle, toRequest } from '../engine/lock-handle.js';
import { LockNotHeldError } from '../errors.js';
import { fenceCounterKey, lockKeys } from '../keys.js';
import type { Lock } from '../lock.js';
import type { LockOptions, TryLockOptions } from '../options.js';
import { fencedLockIssue, fencedLockToken } from '../scripts/index.js';
import { lockBackend } from './reentrant-lock.js';

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
 * hand-over); the token is then issued to the holder while it holds the lock, which also proves
 * the hold with a round trip.
 */
function fencedBackend(ctx: ClientContext, name: string): LockBackend {
  const base = lockBackend(ctx, name, 'fenced-lock', { queue: true });
  const { legacyFence } = lockKeys(ctx.options.keyPrefix, name);
  const fence = fenceCounterKey(ctx.options.keyPrefix, name);
  return {
    ...base,
    begin(owner, leaseMs) {
      const acquisition = base.begin(owner, leaseMs);
      return {
        name: acquisition.name,
        kind: acquisition.kind,
        channel: acquisition.channel,
        get waitId() {
          return acquisition.waitId;
        },
        giveUp: () => acquisition.giveUp(),
        async attempt(deadline, listening, message) {
          const taken = await acquisition.attempt(deadline, listening, message);
          if (!taken.acquired) return taken;
          const token = await ctx.run(fencedLockIssue, [base.key, fence, legacyFence], [owner], deadline);
          // Lost in between (a lease shorter than a round trip): not acquired, try again.
          if (token === null) return { acquired: false, retryIn: 1 };
          return { acquired: true, value: { ...taken.value, token: BigInt(token as string) } };
        },
      };
    },
  };
}

class FencedLockHandle extends LockHandle implements FencedLock {
  constructor(
    private readonly ctx: ClientContext,
    private readonly key: string,
    backend: LockBackend,
  ) {
    super(new KeyLock(ctx, backend));
  }

  async lockAndGetToken(options?: LockOptions): Promise<bigint> {
    // Without a deadline the wait only ends acquired (or by rejecting).
    const taken = await this.take(toRequest(options, false), 'unlock');
    return taken!.held.token!;
  }

  async tryLockAndGetToken(options?: TryLockOptions): Promise<bigint | null> {
    const request = toRequest(options, true);
    const taken = await this.take({ ...request, deadline: request.deadline ?? now() }, 'unlock');
    return taken?.held.token ?? null;
  }

  async getToken(): Promise<bigint> {
    this.ctx.assertOpen();
    const token = await this.ctx.run(fencedLockToken, [this.key], []);
    if (token === null)
      throw new LockNotHeldError(`Lock "${this.name}" is not held, so it has no current fencing token`);
    return BigInt(token as string);
  }
}

/** Creates the fenced lock returned by `LockClient.getFencedLock()`. */
export function createFencedLock(ctx: ClientContext, name: string): FencedLock {
  const backend = fencedBackend(ctx, name);
  return new FencedLockHandle(ctx, backend.key, backend);
}
