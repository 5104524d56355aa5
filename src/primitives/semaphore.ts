import type { ClientContext } from '../context.js';
import { acquireLoop, type Attempt } from '../engine/acquire-loop.js';
import { semaphoreKeys } from '../keys.js';
import { randomId } from '../owner.js';
import {
  semaphoreAcquire,
  semaphoreAddPermits,
  semaphoreAvailable,
  semaphoreDrain,
  semaphoreLeave,
  semaphoreTrySetPermits,
  semaphoreUndo,
} from '../scripts/index.js';
import { checkInteger, checkOptionalDuration, checkOptions, checkSignal } from '../validate.js';

/** Options of {@link Semaphore.acquire}. */
export interface SemaphoreAcquireOptions {
  /** Aborting stops waiting, rejects with the signal's reason and leaves nothing taken. */
  signal?: AbortSignal;
}

/** Options of {@link Semaphore.tryAcquire}. */
export interface SemaphoreTryAcquireOptions extends SemaphoreAcquireOptions {
  /**
   * How many permits to take at once.
   * @default 1
   */
  permits?: number;
  /** How long to wait for them (ms). Left out: one attempt only. */
  waitTime?: number;
}

/** How long an acquire call is remembered, so that a call whose reply was lost can be undone. */
const GRANT_WINDOW_MS = 60_000;

/**
 * A distributed counting semaphore (Redisson's RSemaphore). Permits are not owned: any party may
 * release them. The available count is one Redis string kept without TTL (it is the semaphore's
 * state). Waiters queue in Redis: the oldest live waiter reserves the permits it asked for, so a
 * request for several permits is not starved by a stream of single-permit takers.
 */
export class Semaphore {
  /** @internal Tells `latchkey/rx` that `acquire(permits, options)` takes its options second. */
  static readonly rxOptionsIndex: Readonly<Record<string, number>> = Object.freeze({ acquire: 1 });

  readonly #ctx: ClientContext;
  readonly #name: string;
  readonly #permits: string;
  readonly #queue: string;
  readonly #wants: string;
  readonly #grants: string;
  readonly #channel: string;

  /** @internal Use `LockClient.getSemaphore(name)`. */
  constructor(ctx: ClientContext, name: string) {
    this.#ctx = ctx;
    this.#name = name;
    const keys = semaphoreKeys(ctx.options.keyPrefix, name);
    this.#permits = keys.permits;
    this.#queue = keys.queue;
    this.#wants = keys.wants;
    this.#grants = keys.grants;
    this.#channel = keys.channel;
  }

  /** The semaphore's name. */
  get name(): string {
    return this.#name;
  }

  /** Sets the number of permits if it was never set; true when it was set by this call. */
  async trySetPermits(permits: number): Promise<boolean> {
    checkInteger(permits, 'permits', 0);
    this.#ctx.assertOpen();
    return Number(await this.#ctx.run(semaphoreTrySetPermits, [this.#permits], [permits, this.#channel])) === 1;
  }

  /** Adds permits; a negative number removes them (the count may go below zero). */
  async addPermits(permits: number): Promise<void> {
    checkInteger(permits, 'permits', -Number.MAX_SAFE_INTEGER);
    this.#ctx.assertOpen();
    await this.#ctx.run(semaphoreAddPermits, [this.#permits], [permits, this.#channel]);
  }

  /** Waits until `permits` permits are taken. */
  async acquire(permits = 1, options?: SemaphoreAcquireOptions): Promise<void> {
    checkInteger(permits, 'permits', 1);
    const given = checkOptions<SemaphoreAcquireOptions>(options);
    await this.#take(permits, undefined, checkSignal(given.signal));
  }

  /** Takes `permits` (default 1) at once, or within `waitTime`; true when taken. */
  async tryAcquire(options?: SemaphoreTryAcquireOptions): Promise<boolean> {
    const given = checkOptions<SemaphoreTryAcquireOptions>(options);
    const permits = given.permits === undefined ? 1 : checkInteger(given.permits, 'permits', 1);
    const waitTime = checkOptionalDuration(given.waitTime, 'waitTime') ?? 0;
    return this.#take(permits, waitTime, checkSignal(given.signal));
  }

  /** Returns `permits` (default 1) to the semaphore. Anyone may release, not only a taker. */
  async release(permits = 1): Promise<void> {
    checkInteger(permits, 'permits', 1);
    this.#ctx.assertOpen();
    await this.#ctx.run(semaphoreAddPermits, [this.#permits], [permits, this.#channel]);
  }

  /** The number of permits available now (negative after `addPermits` removed more than were free). */
  async availablePermits(): Promise<number> {
    this.#ctx.assertOpen();
    return Number(await this.#ctx.run(semaphoreAvailable, [this.#permits], []));
  }

  /** Takes every available permit; returns how many. */
  async drainPermits(): Promise<number> {
    this.#ctx.assertOpen();
    return Number(await this.#ctx.run(semaphoreDrain, [this.#permits], []));
  }

  async #take(permits: number, waitTime: number | undefined, signal: AbortSignal | undefined): Promise<boolean> {
    this.#ctx.assertOpen();
    const { run, options, waiters } = this.#ctx;
    // Only a caller that will wait takes a place in the queue.
    const waiterId = waitTime === 0 ? '' : randomId(12);
    const timeout = options.fairWaiterTimeout;
    const attempt = async (deadline: number | undefined): Promise<Attempt<true>> => {
      const attemptId = randomId(12);
      const keys = [this.#permits, this.#queue, this.#wants, this.#grants];
      const args = [permits, attemptId, waiterId, timeout, this.#channel, GRANT_WINDOW_MS];
      try {
        const retryIn = await run(semaphoreAcquire, keys, args, deadline);
        return retryIn === null ? { acquired: true, value: true } : { acquired: false, retryIn: Number(retryIn) };
      } catch (error) {
        // The call may still run, or may have run: undo it (Redis runs the undo after it).
        this.#undo(attemptId, permits);
        if (deadline !== undefined && Date.now() >= deadline) return { acquired: false, retryIn: 0 };
        throw error;
      }
    };
    let taken: true | undefined;
    try {
      taken = await acquireLoop({ attempt, waiters, channel: this.#channel, waitTime, signal, name: this.#name });
    } finally {
      if (!taken && waiterId !== '') await this.#leave(waiterId);
    }
    if (!taken) return false;
    if (signal?.aborted) {
      // Aborted while the winning attempt was in flight: give the permits back.
      await this.release(permits).catch(() => undefined);
      throw signal.reason;
    }
    return true;
  }

  #undo(attemptId: string, permits: number): void {
    const keys = [this.#permits, this.#grants];
    this.#ctx.run(semaphoreUndo, keys, [attemptId, permits, this.#channel, GRANT_WINDOW_MS]).catch(() => undefined);
  }

  /** Removes a waiter that gave up; if this fails its entry is skipped after the waiter timeout. */
  async #leave(waiterId: string): Promise<void> {
    const keys = [this.#permits, this.#queue, this.#wants];
    await this.#ctx.run(semaphoreLeave, keys, [waiterId, this.#channel]).catch(() => undefined);
  }
}

/** Creates the semaphore returned by `LockClient.getSemaphore()`. */
export function createSemaphore(ctx: ClientContext, name: string): Semaphore {
  return new Semaphore(ctx, name);
}
