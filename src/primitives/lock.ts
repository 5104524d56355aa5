import type { ClientContext } from '../context.js';
import { acquireLoop, type AcquireLoopOptions, type Attempt, type QueuedWait } from '../engine/acquire-loop.js';
import { FixedDelayQueue } from '../engine/fixed-delay-queue.js';
import type { LockBackend, LockStatus } from '../engine/lock-backend.js';
import { LockHandle } from '../engine/lock-handle.js';
import { LockLostError } from '../errors.js';
import { lockKeys } from '../keys.js';
import { lockAcquire, lockForceUnlock, lockLeave, lockRelease, lockRenew, lockStatus } from '../scripts/index.js';

/**
 * Names one wait among this process's waits (its hand-overs arrive on its client's own channel,
 * and its place is keyed by its owner): unique, not secret, so a counter does, and costs no
 * getrandom() syscall on the way into every contended wait.
 */
let waitCount = 0;
const nextWaitToken = (): string => (++waitCount).toString(36);

/** The outcome of every successful attempt of a lock without fencing tokens (shared: it never changes). */
const ACQUIRED: Attempt<null> = Object.freeze({ acquired: true, value: null });

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
  const keys = lockKeys(ctx.options.keyPrefix, name);
  const key = keys.hash;
  const channel = keys.handOverPrefix;
  const queueKeys = [key, keys.queue, keys.waiters];
  /** Where hand-overs to this client's waiters arrive: the prefix plus ":" and the client id. */
  const handOverChannel = `${channel}:${ctx.clientId}`;
  const { run } = ctx;
  const { fairWaiterTimeout } = ctx.options;
  const refreshEvery = Math.max(1, Math.floor(fairWaiterTimeout / 3));

  /**
   * A hand-over keeps the lock for its new owner (which might have died) no longer than a dead
   * waiter keeps its place: its lease, but at most fairWaiterTimeout. A holder whose lease is longer
   * sets it with a claim, sent a third of that reservation later: most critical sections are over
   * by then, and theirs never pays for it (sent at once, it cost every hand-over of a busy lock a
   * script, and 0.1-0.2 ms more between holders). Should the lock be gone by then (forced,
   * expired), the hold is reported lost. Claims wait in a queue on one timer, by owner.
   */
  const pendingClaims = new FixedDelayQueue<string, number>(refreshEvery, (owner, leaseMs) => {
    if (!ctx.isOpen()) return; // shut down: held locks are left to their leases
    run(lockAcquire, queueKeys, [owner, leaseMs, fairWaiterTimeout, 'c']).then(
      (reply) => {
        const hold = reply === null ? undefined : ctx.holds.get(key, owner);
        if (hold)
          ctx.holds.lost(
            hold,
            new LockLostError(`Lock "${name}" was lost: the hand-over to this owner expired before it was claimed`),
          );
      },
      () => undefined, // unreachable Redis: the watchdog or the lease timer reports it
    );
  });

  // Bounded: a wait that ended by its waitTime must not then hang on an unreachable Redis; a place
  // that could not be given up lapses by itself.
  const leave = async (place: QueuedWait): Promise<void> => {
    if (place.queued === undefined) return;
    const args = [place.queued, channel, place.token];
    await run(lockLeave, queueKeys, args, Date.now() + LEAVE_TIMEOUT_MS).catch(() => undefined);
  };

  // Uncontended first: one attempt that neither queues nor subscribes. Skipped while this client
  // still listens for this lock's hand-overs from a recent wait (the lock is busy): the queued
  // attempt then costs the same one round trip, and a second one is saved.
  const worthTryingFirst = (): boolean => !ctx.waiters.isSubscribed(handOverChannel);

  const cancelClaim = (owner: string): void => pendingClaims.delete(owner);

  const claimLater = (owner: string, leaseMs: number): void => {
    if (leaseMs > fairWaiterTimeout) pendingClaims.add(owner, leaseMs); // else the reservation is the whole lease
  };

  return {
    name,
    key,
    channel,
    renewScript: lockRenew,
    // Promise chains, not async functions, on the path every lock() takes: fewer frames to resume.
    attempt(owner, leaseMs, deadline, place) {
      if (place?.handedOver) {
        // The release already made this owner the holder and said so: that message is the acquisition.
        place.handedOver = false;
        claimLater(owner, leaseMs);
        return Promise.resolve(ACQUIRED);
      }
      // Outside a queued wait (a one-shot tryLock(), the uncontended first try) never queue.
      if (place) place.queued = owner;
      const args = place ? [owner, leaseMs, fairWaiterTimeout, '1', place.token] : [owner, leaseMs];
      return run(lockAcquire, queueKeys, args, deadline).then((ttl): Attempt<null> => {
        if (ttl === null) {
          // Taken, re-entered, or a hand-over found before its message: the lease is set either way.
          cancelClaim(owner);
          return ACQUIRED;
        }
        // A queued waiter comes back before its place lapses, even while the holder's lease runs long.
        return { acquired: false, retryIn: place ? Math.min(Number(ttl), refreshEvery) : Number(ttl) };
      });
    },
    worthTryingFirst,
    async wait<T>(options: AcquireLoopOptions<T>): Promise<T | undefined> {
      if (options.waitTime === 0) return acquireLoop(options);
      options.signal?.throwIfAborted();
      const deadline = options.waitTime === undefined ? undefined : Date.now() + options.waitTime;
      // A caller that did not make that first attempt itself (see worthTryingFirst).
      if (!options.first && worthTryingFirst()) {
        const first = await options.attempt(deadline);
        if (first.acquired) return first.value;
      }
      const waitTime = deadline === undefined ? undefined : deadline - Date.now();
      if (waitTime !== undefined && waitTime <= 0) return undefined;

      // Hand-overs are published on this client's own channel of the lock, so that they wake this
      // process only.
      const place: QueuedWait = { token: nextWaitToken(), queued: undefined, handedOver: false };
      let value: T | undefined;
      try {
        const { attempt, waiters, signal, name: lockName } = options;
        // Named fields, not a spread: copying an object with properties added costs microseconds.
        value = await acquireLoop({
          attempt,
          waiters,
          signal,
          name: lockName,
          channel: handOverChannel,
          waitTime,
          place,
        });
      } catch (error) {
        // Aborted or failed: give the place (or a hand-over not yet claimed) up now.
        await leave(place);
        throw error;
      }
      if (value === undefined) await leave(place);
      return value;
    },
    release(owner) {
      return run(lockRelease, queueKeys, [owner, channel]).then((reply) => {
        const left = Number(reply);
        if (left <= 0) cancelClaim(owner);
        return left;
      });
    },
    async releaseAll(owner) {
      cancelClaim(owner);
      await run(lockRelease, queueKeys, [owner, channel, 'all']);
    },
    async forceUnlock() {
      return Number(await run(lockForceUnlock, queueKeys, [channel])) === 1;
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
