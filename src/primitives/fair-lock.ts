import { AsyncLocalStorage } from 'node:async_hooks';
import type { ClientContext } from '../context.js';
import { acquireLoop, type AcquireLoopOptions } from '../engine/acquire-loop.js';
import type { LockBackend } from '../engine/lock-handle.js';
import { LockHandle } from '../engine/lock-handle.js';
import { primitiveKeys } from '../keys.js';
import type { Lock } from '../lock.js';
import { fairLockAcquire, fairLockLeave } from '../scripts/index.js';
import { reentrantBackend } from './lock.js';

/** One acquisition in progress: whether it may queue, and the owner that did. */
interface FairCall {
  readonly enqueue: boolean;
  queued: string | undefined;
}

/**
 * Carries the acquisition's settings from the wait into its attempts: the handle owns the attempt
 * closure, so this is how a one-shot `tryLock()` says "don't queue" and how the wait learns which
 * owner to take out of the queue when it gives up.
 */
const calls = new AsyncLocalStorage<FairCall>();

/** How long a waiter that gives up waits for its place to be removed. */
const LEAVE_MS = 250;

/**
 * The fair lock (Redisson's RFairLock): the re-entrant lock hash plus a queue of waiters in request
 * order. A waiter joins the queue on its first failed attempt and may take the lock only when it is
 * at the head. Its place lapses `fairWaiterTimeout` after its last attempt, so a live waiter retries
 * at least every third of that (each attempt refreshes its place) and a dead one is skipped.
 */
export function fairBackend(ctx: ClientContext, name: string): LockBackend {
  const keys = primitiveKeys(ctx.options.keyPrefix, name);
  const base = reentrantBackend(ctx, name);
  const queueKeys = [base.key, keys.key('fair-queue'), keys.key('fair-timeouts')];
  const { run } = ctx;
  const { fairWaiterTimeout } = ctx.options;
  const refreshEvery = Math.max(1, Math.floor(fairWaiterTimeout / 3));

  // Give the place up now rather than after it lapses; but a frozen server must not hold the
  // caller past the timeout it asked for, so the call is cut short (the place then just lapses).
  const leave = async (call: FairCall): Promise<void> => {
    if (call.queued === undefined) return;
    await run(fairLockLeave, queueKeys, [call.queued, base.channel], Date.now() + LEAVE_MS).catch(() => undefined);
  };

  return {
    ...base,
    async attempt(owner, leaseMs, deadline) {
      // Outside this lock's own wait (a MultiLock taking members directly) an attempt never
      // queues: nobody would refresh or remove the place.
      const call = calls.getStore();
      const enqueue = call?.enqueue ?? false;
      if (call && enqueue) call.queued = owner;
      const reply = await run(fairLockAcquire, queueKeys, [owner, leaseMs, fairWaiterTimeout, enqueue ? 1 : 0], deadline);
      if (reply === null) return { acquired: true, value: null };
      // Come back before this place lapses, even while the holder's lease runs long.
      return { acquired: false, retryIn: Math.min(Number(reply), refreshEvery) };
    },
    async wait<T>(options: AcquireLoopOptions<T>): Promise<T | undefined> {
      const call: FairCall = { enqueue: options.waitTime !== 0, queued: undefined };
      let value: T | undefined;
      try {
        value = await calls.run(call, () => acquireLoop(options));
      } catch (error) {
        await leave(call); // aborted, shut down or failed
        throw error;
      }
      if (value === undefined) await leave(call); // waitTime elapsed
      return value;
    },
  };
}

/** Creates the fair lock returned by `LockClient.getFairLock()`. */
export function createFairLock(ctx: ClientContext, name: string): Lock {
  return new LockHandle(ctx, fairBackend(ctx, name));
}
