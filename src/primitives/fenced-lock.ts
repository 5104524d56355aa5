/**
 * FencedLock (getFencedLock): the re-entrant lock plus a fencing token that strictly increases
 * over every acquisition of a name.
 */
import { now } from '../clock.js';
import type { ClientContext } from '../context.js';
import { KeyLock } from '../engine/key-lock.js';
import type { LockBackend } from '../engine/lock-core.js';
import { LockHandle, toRequest } from '../engine/lock-handle.js';
import { LockNotHeldError } from '../errors.js';
import { fenceCounterKey } from '../keys.js';
import type { Lock } from '../lock.js';
import type { LockOptions, TryLockOptions } from '../options.js';
import { fencedLockToken } from '../scripts/index.js';
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
 * order with, `getLock()` of the same name), plus a token counter. Every grant is the lock's own
 * acquisition with one more step: the token is drawn while the owner holds the lock, in the script
 * that grants it, or (handed over by a release) in one round trip that also proves the hold.
 */
function fencedBackend(ctx: ClientContext, name: string): LockBackend {
  return lockBackend(ctx, name, 'fenced-lock', { queue: true }, fenceCounterKey(ctx.options.keyPrefix, name));
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
