import { AsyncLocalStorage } from 'node:async_hooks';
import type { ClientContext } from '../context.js';
import { acquireLoop, type AcquireLoopOptions } from '../engine/acquire-loop.js';
import { beforeDeadline } from '../engine/deadline.js';
import type { LockBackend, LockStatus } from '../engine/lock-handle.js';
import { LockHandle } from '../engine/lock-handle.js';
import { LockLostError } from '../errors.js';
import { primitiveKeys } from '../keys.js';
import { randomId } from '../owner.js';
import { lockAcquire, lockForceUnlock, lockLeave, lockRelease, lockRenew, lockStatus } from '../scripts/index.js';

/** One acquisition in progress: whether it may queue, the owner that did, and whether a release handed it the lock. */
interface WaitCall {
  readonly enqueue: boolean;
  /** Names this wait in hand-over messages, so a late message of an earlier wait is never taken for this one. */
  readonly token: string;
  queued: string | undefined;
  handedOver: boolean;
}

/**
 * Carries the acquisition's settings from the wait into its attempts (the handle owns the attempt
 * closure): a one-shot `tryLock()` never queues, and the wait learns which owner to take out of the
 * queue when it gives up, and which name hand-over messages for it carry.
 */
const calls = new AsyncLocalStorage<WaitCall>();

/** How long a lock handed over to a waiter stays reserved for it until it claims it with its own lease. */
const HANDOVER_RESERVE_MS = 2_000;
/** How long giving up a place may take before the waiter leaves it to lapse. */
const LEAVE_TIMEOUT_MS = 200;

/**
 * The re-entrant lock (Redisson's RLock): one hash per lock, field = owner, value = hold count,
 * expiring with the lease; plus a short-lived queue of the owners waiting for it. The last release
 * hands the lock to the first live waiter and tells it by name, so waiting is event-driven without
 * a herd, and a process that releases and asks again queues behind those already waiting instead
 * of barging ahead of them (it would otherwise win every time: its request needs no wake-up).
 * A waiter refreshes its place every third of `fairWaiterTimeout`; a dead one's place lapses.
 */
export function reentrantBackend(ctx: ClientContext, name: string): LockBackend {
  const keys = primitiveKeys(ctx.options.keyPrefix, name);
  const key = keys.key('lock');
  const channel = keys.channel;
  const queueKeys = [key, keys.key('lock-queue'), keys.key('lock-waiters')];
  /** Where hand-overs to this client's waiters arrive: the channel plus ":" and the client id. */
  const directChannel = `${channel}:${ctx.clientId}`;
  const { run } = ctx;
  const { fairWaiterTimeout } = ctx.options;
  const refreshEvery = Math.max(1, Math.floor(fairWaiterTimeout / 3));
  const reserve = Math.min(HANDOVER_RESERVE_MS, fairWaiterTimeout);

  // Bounded: a wait that ended by its waitTime must not then hang on an unreachable Redis; a place
  // that could not be given up lapses by itself.
  const leave = async (owner: string): Promise<void> => {
    await run(lockLeave, queueKeys, [owner, channel, reserve], Date.now() + LEAVE_TIMEOUT_MS).catch(() => undefined);
  };

  /**
   * After a hand-over: set this owner's own lease (the hand-over only reserved the lock for a short
   * while, in case the waiter had died) and mark the claim done. Sent at once, so it runs before
   * anything else this holder sends on the connection; it is off the waiting path. Should the lock
   * be gone already (reservation expired, forced), the hold is reported lost.
   */
  const claim = (owner: string, leaseMs: number): void => {
    run(lockAcquire, queueKeys, [owner, leaseMs, fairWaiterTimeout, 'c', '']).then(
      (reply) => {
        if (reply === null) return;
        const hold = ctx.holds.get(key, owner);
        if (hold)
          ctx.holds.lost(
            hold,
            new LockLostError(`Lock "${name}" was lost: the hand-over to this owner expired before it was claimed`),
          );
      },
      () => undefined, // unreachable Redis: the watchdog or the lease timer reports it
    );
  };

  return {
    name,
    key,
    channel,
    renewScript: lockRenew,
    async attempt(owner, leaseMs, deadline) {
      const call = calls.getStore();
      if (call?.handedOver) {
        // The release already made this owner the holder and said so: that message is the acquisition.
        call.handedOver = false;
        claim(owner, leaseMs);
        return { acquired: true, value: null };
      }
      // Outside this lock's own wait (one-shot tryLock, a MultiLock taking members) never queue:
      // nobody would refresh or remove the place.
      const enqueue = call?.enqueue ?? false;
      if (call && enqueue) call.queued = owner;
      const args = [owner, leaseMs, fairWaiterTimeout, enqueue ? '1' : '0', call?.token ?? ''];
      const ttl = await run(lockAcquire, queueKeys, args, deadline);
      if (ttl === null) return { acquired: true, value: null };
      // A queued waiter comes back before its place lapses, even while the holder's lease runs long.
      return { acquired: false, retryIn: enqueue ? Math.min(Number(ttl), refreshEvery) : Number(ttl) };
    },
    async wait<T>(options: AcquireLoopOptions<T>): Promise<T | undefined> {
      if (options.waitTime === 0) return acquireLoop(options);
      // Uncontended first: one attempt that neither queues nor pays for a wait context.
      options.signal?.throwIfAborted();
      const started = Date.now();
      const first = await options.attempt(options.waitTime === undefined ? undefined : started + options.waitTime);
      if (first.acquired) return first.value;
      const waitTime = options.waitTime === undefined ? undefined : options.waitTime - (Date.now() - started);
      if (waitTime !== undefined && waitTime <= 0) return undefined;

      // Hand-overs are published on this client's own channel of the lock, so that they wake this
      // process only, not every process with a waiter (those listen on the shared channel).
      const subscribing = ctx.connection.subscribe(directChannel, (message) => ctx.waiters.deliver(channel, message));
      const deadline = waitTime === undefined ? undefined : Date.now() + waitTime;
      const stopDirect = await beforeDeadline(subscribing, deadline, (late) => void late().catch(() => undefined));
      if (!stopDirect) return undefined;
      const call: WaitCall = { enqueue: true, token: randomId(6), queued: undefined, handedOver: false };
      const waiterId = (): string | undefined =>
        call.queued === undefined ? undefined : `${call.queued}|${call.token}`;
      const onAddressed = (): void => {
        call.handedOver = true;
      };
      let value: T | undefined;
      try {
        value = await calls.run(call, () => acquireLoop({ ...options, waitTime, waiterId, onAddressed }));
      } catch (error) {
        // Aborted or failed: give the place (or a hand-over not yet claimed) up now.
        if (call.queued !== undefined) await leave(call.queued);
        await stopDirect().catch(() => undefined);
        throw error;
      }
      if (value === undefined) {
        if (call.queued !== undefined) await leave(call.queued);
        await stopDirect().catch(() => undefined);
      } else {
        // Acquired: unsubscribing need not delay it; it goes out after the caller's next step.
        setImmediate(() => void stopDirect().catch(() => undefined));
      }
      return value;
    },
    async release(owner) {
      return Number(await run(lockRelease, queueKeys, [owner, channel, reserve, 'one']));
    },
    async releaseAll(owner) {
      await run(lockRelease, queueKeys, [owner, channel, reserve, 'all']);
    },
    async forceUnlock() {
      return Number(await run(lockForceUnlock, queueKeys, [channel, reserve])) === 1;
    },
    async status(owner) {
      return toStatus(await run(lockStatus, [key], [owner]));
    },
  };
}

/** Reads the `{ exists, holds, ttl }` reply of a status script. */
export function toStatus(reply: unknown): LockStatus {
  const [exists, holds, ttl] = (reply as number[]).map(Number);
  return { locked: exists === 1, holds: holds ?? 0, ttl: ttl ?? -2 };
}

/** Creates the plain re-entrant lock returned by `LockClient.getLock()`. */
export function createLock(ctx: ClientContext, name: string): LockHandle {
  return new LockHandle(ctx, reentrantBackend(ctx, name));
}
