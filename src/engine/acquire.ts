/**
 * The one acquisition pipeline: a first attempt, then subscribe, queue and park until a message, the
 * holder's lease end or the deadline; failures ridden out within commandTimeout; replicaAcks.
 */
import { now } from '../clock.js';
import type { ClientContext } from '../context.js';
import { listening, type LockKind } from '../diagnostics.js';
import { CommandRefusedError, RedisUnavailableError } from '../errors.js';
import { isCutByDeadline, MIN_CALL_MS, retryPause, withTimeout } from '../redis/script-runner.js';
import { abortable, sleep } from './timers.js';
import type { Waiter, Waiters } from './waiters.js';

/** What one attempt found. */
export type Attempt<T> =
  | { readonly acquired: true; readonly value: T }
  /** `retryIn`: ms until it is worth trying again even without a message (the holder's lease end, say). */
  | { readonly acquired: false; readonly retryIn: number };

/** One acquisition, as a primitive describes it to the pipeline. */
export interface Acquisition<T> {
  readonly name: string;
  readonly kind: LockKind;
  /**
   * One attempt. `listening`: the wait is subscribed to `channel`, so a message addressed to it
   * will be heard (only then may the lock queue it for a hand-over). `message` is the payload of
   * such a message, if one woke it (a lock handed over to it). Safe to repeat: an attempt whose
   * reply was lost is simply made again.
   */
  attempt(deadline: number | undefined, listening: boolean, message: string | undefined): Promise<Attempt<T>>;
  /**
   * Gives back whatever this acquisition may hold: called once when it ends without acquiring
   * (time up, aborted, failed), after an uncertain attempt too, and when the caller aborted while
   * the winning attempt was in flight. Holding nothing, it does nothing.
   */
  giveUp(): Promise<void>;
  /**
   * The key a grant is written to, whose node's replicas must acknowledge it when the client asks
   * for `replicaAcks`; left out, the acquisition grants nothing to replicate (a latch's wait).
   */
  readonly grantKey?: string;
  /** Where releases are announced; left out, the wait polls (see `pause`). */
  readonly channel?: string;
  /** Names this wait in addressed messages. */
  readonly waitId?: string;
  /** A polling wait's pause before retry number `retry` (the SpinLock's backoff). */
  pause?(retry: number): number;
}

/** When an acquisition ends. */
export interface AcquireBounds {
  /** Epoch ms after which the wait gives up; undefined: wait until acquired. `now()`: one attempt. */
  readonly deadline?: number;
  readonly signal?: AbortSignal;
}

/** Retry at least this often when the holder's lease is unknown or has no end. */
const FALLBACK_RETRY_MS = 1_000;

/**
 * The one acquisition pipeline: the first attempt (uncontended: nothing set up for a wait), then
 * subscribe and try again (a release may have come before the subscription), then park until a
 * message, the holder's lease end or the deadline, and try again. A client still subscribed to
 * the channel from a recent wait finds the lock busy: it joins before its first attempt, which
 * then listens (a lock queues it), saving the round trip of a try that would fail. A failed call
 * (Redis unreachable, a failover) is retried, within the deadline and `failFor`; at the deadline the
 * answer is what the last attempt found: not acquired (undefined) if it found the lock held,
 * RedisUnavailableError if it could not ask. Whatever ends the wait without the lock gives back
 * what the acquisition may hold. An abort is the caller's answer at once, also while an attempt or
 * the replicas' acknowledgement of its grant is awaited: what it wins is given back once it settles.
 */
export function acquire<T>(
  acquisition: Acquisition<T>,
  ctx: ClientContext,
  bounds: AcquireBounds,
): Promise<T | undefined> {
  const { deadline, signal } = bounds;
  if (signal?.aborted) return Promise.reject(signal.reason as Error);
  if (acquisition.grantKey !== undefined) ctx.servers.check(acquisition.grantKey);
  const single = deadline !== undefined && deadline <= now();
  // The uncontended case, most of all: one attempt, and nothing set up for a wait unless it fails.
  // A wait with a signal, a grant the replicas must acknowledge, or a lock this client still
  // listens on (it joins first, see below) take the whole pipeline from the start. A client that
  // listens on nothing need not name the lock's channel to know.
  const simple =
    signal === undefined &&
    (ctx.options.replicaAcks === 0 || acquisition.grantKey === undefined) &&
    (single || !ctx.waiters.listening || !listensOn(ctx, acquisition.channel));
  if (!simple) return pipeline(acquisition, ctx, bounds);
  let attempt: Promise<Attempt<T>>;
  try {
    attempt = acquisition.attempt(single ? undefined : deadline, false, undefined);
  } catch (error) {
    return pipeline(acquisition, ctx, bounds, { error });
  }
  return attempt.then(
    (outcome) => (outcome.acquired ? outcome.value : pipeline(acquisition, ctx, bounds, { outcome })),
    (error: unknown) => pipeline(acquisition, ctx, bounds, { error }),
  );
}

function listensOn(ctx: ClientContext, channel: string | undefined): boolean {
  return channel !== undefined && ctx.waiters.isSubscribed(channel);
}

/** How the first attempt ended, when it was made before the pipeline (see acquire). */
type FirstAttempt<T> = { readonly outcome: Attempt<T> } | { readonly error: unknown };

async function pipeline<T>(
  acquisition: Acquisition<T>,
  ctx: ClientContext,
  { deadline, signal }: AcquireBounds,
  first?: FirstAttempt<T>,
): Promise<T | undefined> {
  signal?.throwIfAborted();
  // Failed calls in a row are ridden out for commandTimeout before the wait fails.
  const wait = new WaitState(acquisition, ctx.options.commandTimeout);
  const single = deadline !== undefined && deadline <= now();
  // A single attempt is bounded by commandTimeout alone, not by a deadline of "now".
  const callDeadline = single ? undefined : deadline;
  const needsReplicas = ctx.options.replicaAcks > 0 && acquisition.grantKey !== undefined;
  let waiter: Waiter | undefined;
  let message: string | undefined;
  /** A call the caller stopped waiting for (aborted): what it wins is given back once it settles. */
  let abandoned: Promise<unknown> | undefined;
  // Not async: without a signal the call itself is awaited, adding no promise to the common path.
  const heed = <V>(call: Promise<V>): Promise<V> =>
    signal
      ? abortable(call, signal).catch((error: unknown) => {
          if (signal.aborted && error === signal.reason) abandoned = call;
          throw error;
        })
      : call;
  /** The first attempt, made already, or made now. */
  const attemptOnce = (round: number): Promise<Attempt<T>> => {
    if (round === 0 && first) return 'outcome' in first ? Promise.resolve(first.outcome) : Promise.reject(first.error);
    return acquisition.attempt(callDeadline, waiter !== undefined, message);
  };
  try {
    const { channel } = acquisition;
    if (!single && !first && listensOn(ctx, channel)) {
      waiter = await wait.join(ctx.waiters, deadline, signal);
    }
    for (let round = 0; ; round++) {
      // A wait outlives nothing: shutdown() ends it (a spin wait has no subscription to fail).
      if (round > 0) ctx.assertOpen();
      let outcome: Attempt<T> | undefined;
      try {
        outcome = await heed(attemptOnce(round));
      } catch (error) {
        outcome = wait.failed(error);
      }
      // With replicaAcks, a grant too few replicas acknowledged is a failed call, tried again while
      // the owner holds the grant.
      if (outcome?.acquired && needsReplicas && !(await heed(wait.replicated(ctx)))) outcome = undefined;
      else if (outcome) wait.answered();
      if (outcome?.acquired) {
        if (signal?.aborted) throw signal.reason;
        wait.end('acquired');
        return outcome.value;
      }
      if (deadline !== undefined && now() >= deadline) {
        if (wait.unanswered) throw wait.failure;
        wait.end('timeout');
        // Its last call went unanswered: Redis may be out of reach, so giving back is not awaited.
        await giveUp(acquisition, wait.failure !== undefined);
        return undefined;
      }
      wait.start();
      if (channel !== undefined && waiter === undefined) {
        waiter = await wait.join(ctx.waiters, deadline, signal);
        // Subscribed now: try again at once, a release may have come before the subscription.
        if (waiter) continue;
      }
      const remaining = deadline === undefined ? Infinity : deadline - now();
      // Its subscription failed: hearing no release, the wait polls as after a failed call, not at
      // the holder's lease end.
      const deaf = channel !== undefined && waiter === undefined;
      const pause = Math.min(remaining, wait.pauseAfter(deaf ? undefined : outcome, round));
      if (waiter) await waiter.park(pause, signal);
      else await sleep(pause, signal, ctx.closing);
      message = waiter?.takeMessage();
    }
  } catch (error) {
    wait.end(signal?.aborted ? 'aborted' : 'error');
    // The caller hears the abort now; an attempt still in flight is given back after it settles.
    if (abandoned) void abandoned.catch(() => undefined).then(() => giveUp(acquisition, false));
    else await giveUp(acquisition, wait.unreachable);
    throw error;
  } finally {
    waiter?.leave();
  }
}

/**
 * Gives back what the acquisition may hold. Sent after its attempts on the same connection, so
 * Redis runs it after them. Awaited, so the caller finds nothing left behind, except when Redis
 * could not be reached (waiting for it would only add a timeout to the failure) and after an
 * abort that came while an attempt was in flight (it is sent once that attempt settles).
 */
async function giveUp(acquisition: Acquisition<unknown>, unreachable: boolean): Promise<void> {
  const giving = acquisition.giveUp().catch(() => undefined);
  if (!unreachable) await giving;
}

/** The bookkeeping of one wait: failures in a row, and what the `wait` diagnostics report. */
class WaitState<T> {
  #started: number | undefined;
  #firstFailure: number | undefined;
  #failures = 0;
  /** The last call's failure, while the last outcome is one. */
  failure: RedisUnavailableError | undefined;
  /** The last failure was Redis answering that too few replicas acknowledged: Redis is reachable. */
  #shortOfReplicas = false;

  constructor(
    private readonly acquisition: Acquisition<T>,
    private readonly failFor: number,
  ) {}

  /** Some attempt of this wait got Redis' answer. */
  #answeredOnce = false;

  /**
   * The wait must end as failed, not as "not acquired": its last call failed, and not merely by
   * the wait's own time running out after Redis had answered it (a slow reply at the deadline).
   */
  get unanswered(): boolean {
    return this.failure !== undefined && !(this.#answeredOnce && isCutByDeadline(this.failure));
  }

  /** An attempt answered: failures in a row end. */
  answered(): void {
    this.#answeredOnce = true;
    this.#firstFailure = undefined;
    this.#failures = 0;
    this.failure = undefined;
  }

  /** An attempt failed: a RedisUnavailableError becomes `undefined` until failures last `failFor`. */
  failed(error: unknown): undefined {
    if (!(error instanceof RedisUnavailableError)) throw error;
    this.#shortOfReplicas = false;
    return this.#failed(error);
  }

  /** The wait ends on a failure to reach Redis (so giving back cannot be awaited). */
  get unreachable(): boolean {
    return this.failure !== undefined && !this.#shortOfReplicas;
  }

  /** Subscribes; a failure to subscribe is ridden out like a failed attempt (the wait polls meanwhile). */
  async join(
    waiters: Waiters,
    deadline: number | undefined,
    signal: AbortSignal | undefined,
  ): Promise<Waiter | undefined> {
    try {
      return await waiters.join(this.acquisition.channel!, this.acquisition.waitId, deadline, signal);
    } catch (error) {
      if (!(error instanceof RedisUnavailableError)) throw error;
      this.#failed(error);
      return undefined;
    }
  }

  /** Whether the grant just made reached the replicas the client asks for (`replicaAcks`). */
  async replicated(ctx: ClientContext): Promise<boolean> {
    const { grantKey, name } = this.acquisition;
    const { replicaAcks, replicaAckTimeout, commandTimeout } = ctx.options;
    let acked: number;
    try {
      acked = await withTimeout(
        ctx.connection.waitForReplicas!(grantKey!, replicaAcks, replicaAckTimeout),
        Math.max(commandTimeout, replicaAckTimeout + MIN_CALL_MS),
        () => new RedisUnavailableError(`Redis did not answer WAIT for "${name}" in time`, { outcomeUnknown: true }),
      );
    } catch (error) {
      if (error instanceof CommandRefusedError) ctx.warn('REPLICA_ACKS_UNAVAILABLE', error.message);
      return this.failed(error) ?? false;
    }
    if (acked >= replicaAcks) return true;
    this.#shortOfReplicas = true;
    const shortfall = `${acked} of the ${replicaAcks} replicas asked for acknowledged "${name}" within ${replicaAckTimeout} ms`;
    return this.#failed(new RedisUnavailableError(`Only ${shortfall}`)) ?? false;
  }

  #failed(error: RedisUnavailableError): undefined {
    const time = now();
    this.#firstFailure ??= time;
    this.#failures++;
    this.failure = error;
    if (time - this.#firstFailure >= this.failFor) throw error;
    return undefined;
  }

  /** How long to wait before the next attempt. */
  pauseAfter(outcome: Attempt<T> | undefined, round: number): number {
    if (outcome === undefined) return retryPause(this.#failures);
    // PTTL answers -1 for a key without expiry: no moment to aim for.
    const retryIn = outcome.acquired ? 0 : outcome.retryIn === -1 ? FALLBACK_RETRY_MS : Math.max(1, outcome.retryIn);
    return this.acquisition.pause ? Math.min(this.acquisition.pause(round), retryIn) : retryIn;
  }

  start(): void {
    if (this.#started !== undefined) return;
    this.#started = now();
    const { name, kind } = this.acquisition;
    listening('wait')?.publish({ name, kind, phase: 'start' });
  }

  end(outcome: 'acquired' | 'timeout' | 'aborted' | 'error'): void {
    if (this.#started === undefined) return;
    const { name, kind } = this.acquisition;
    const waited = now() - this.#started;
    this.#started = undefined;
    listening('wait')?.publish({ name, kind, phase: 'end', acquired: outcome === 'acquired', waited, outcome });
  }
}
