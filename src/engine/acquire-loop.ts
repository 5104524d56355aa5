import { listening } from '../diagnostics.js';
import { beforeDeadline } from './deadline.js';
import type { Waiters } from './waiters.js';

/** The outcome of one acquisition attempt. */
export type Attempt<T> =
  | { readonly acquired: true; readonly value: T }
  /** `retryIn`: when the holder's lease runs out (ms), the latest moment worth trying again. */
  | { readonly acquired: false; readonly retryIn: number };

/**
 * An attempt failed in flight: past the caller's own deadline that is the timeout they asked for
 * (not acquired, a slow answer rather than an outage); before it, the failure is thrown.
 */
export function failedAttempt(deadline: number | undefined, error: unknown): Attempt<never> {
  if (deadline !== undefined && Date.now() >= deadline) return { acquired: false, retryIn: 0 };
  throw error;
}

/**
 * A wait that holds a place in a queue kept in Redis (the lock's). It is subscribed before its
 * first attempt, so that a hand-over to it never goes out before anyone listens; a message
 * addressed to its token (`=<token>`: a release handed the lock to it) wakes it; and every attempt
 * is given it, to queue under it and to learn of the hand-over.
 */
export interface QueuedWait {
  /** Names the wait in its place and in hand-over messages. */
  readonly token: string;
  /** The owner whose place it is, once an attempt queued (to give the place up when the wait ends). */
  queued: string | undefined;
  /** A message addressed to this wait arrived: a release handed it the lock. */
  handedOver: boolean;
}

export interface AcquireLoopOptions<T> {
  /** One attempt; `deadline` (epoch ms) bounds the Redis call when the caller gave a waitTime. */
  readonly attempt: (deadline: number | undefined, place?: QueuedWait) => Promise<Attempt<T>>;
  readonly waiters: Waiters;
  readonly channel: string;
  /** Left out: wait until acquired. 0: one attempt. */
  readonly waitTime: number | undefined;
  readonly signal: AbortSignal | undefined;
  /** Name reported on the `wait` diagnostics channel. */
  readonly name: string;
  /** Given for a wait with a place in a queue kept in Redis (see QueuedWait). */
  readonly place?: QueuedWait;
  /**
   * The caller's own uncontended first attempt, made and failed (a lock handle makes it without
   * setting anything up for a wait): the wait goes on from there instead of trying that again.
   */
  readonly first?: Attempt<T>;
}

/** Retry at least this often when the holder's TTL is unknown or has no expiry. */
const FALLBACK_RETRY_MS = 1_000;

/**
 * The one wait algorithm: try; on failure subscribe to the release channel, try again (a release
 * may have happened before the subscription), then park until a release message wakes this
 * waiter or the holder's lease runs out, and retry. A wait with a place in a queue subscribes
 * first, then tries. Resolves with the attempt's value, or `undefined` when `waitTime` elapsed.
 * Aborting rejects with the signal's reason.
 */
export async function acquireLoop<T>(options: AcquireLoopOptions<T>): Promise<T | undefined> {
  const { attempt, signal, waitTime, place } = options;
  signal?.throwIfAborted();
  const deadline = waitTime === undefined ? undefined : Date.now() + waitTime;
  if (!place && !options.first) {
    // A single attempt (waitTime 0) is bounded by commandTimeout alone, not by a deadline of "now".
    const first = await attempt(waitTime === 0 ? undefined : deadline);
    if (first.acquired) return first.value;
    if (deadline === undefined ? false : Date.now() >= deadline) return undefined;
  }

  // The wait starts when an attempt failed: after the first one, or for a queued wait (which makes
  // its first attempt after subscribing) when that one did.
  let started: number | undefined;
  const start = (): void => {
    started = Date.now();
    listening('wait')?.publish({ name: options.name, phase: 'start' });
  };
  const end = (acquired: boolean): void => {
    if (started === undefined) return;
    const waited = Date.now() - started;
    listening('wait')?.publish({ name: options.name, phase: 'end', acquired, waited });
  };
  if (!place) start();
  // Subscribing is a round trip too (none while the channel lingers subscribed from an earlier
  // wait): on a frozen server it must not outlast the caller's wait.
  const joining = options.waiters.join(options.channel, place?.token);
  const waiter = await beforeDeadline(joining, deadline, (late) => late.leave());
  if (!waiter) return undefined;
  try {
    for (;;) {
      signal?.throwIfAborted();
      waiter.beforeAttempt();
      const next = await attempt(deadline, place);
      if (next.acquired) {
        end(true);
        return next.value;
      }
      if (started === undefined) start();
      const remaining = deadline === undefined ? Infinity : deadline - Date.now();
      if (remaining <= 0) {
        end(false);
        return undefined;
      }
      // PTTL answers 0 in a lease's last millisecond and -2 when the key just vanished: retry at
      // once. Only -1 (a key without expiry) leaves no moment to aim for.
      const retryIn = next.retryIn === -1 ? FALLBACK_RETRY_MS : Math.max(1, next.retryIn);
      await waiter.park(Math.min(retryIn, remaining), signal);
      if (place && waiter.takeAddressed()) place.handedOver = true;
    }
  } finally {
    waiter.leave();
  }
}
