/**
 * Semaphore (getSemaphore): a counting semaphore whose permits have no owner; waiters queue in
 * Redis, oldest first.
 */
import { now } from '../clock.js';
import type { ClientContext } from '../context.js';
import { acquire, type Attempt } from '../engine/acquire.js';
import { semaphoreKeys } from '../keys.js';
import { newOwnerId } from '../owner.js';
import { MAX_RETRY_PAUSE_MS, runUntilKnown } from '../redis/script-runner.js';
import {
  semaphoreAcquire,
  semaphoreAddPermits,
  semaphoreAvailable,
  semaphoreDrain,
  semaphoreGiveUp,
  semaphoreTrySetPermits,
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

/**
 * A distributed counting semaphore (Redisson's RSemaphore). Permits are not owned: any party may
 * release them. The available count is one Redis string kept without TTL (it is the semaphore's
 * state). Waiters queue in Redis: the oldest live waiter reserves the permits it asked for, so a
 * request for several permits is not starved by a stream of single-permit takers.
 *
 * Every change is safe to repeat when its reply was lost: an acquisition carries an id whose
 * grant Redis remembers for a while, and a release or addPermits a marker of its own, so that a
 * call sent again never takes or adds permits twice.
 */
export class Semaphore {
  /** @internal Tells `latchkey/rx` that `acquire(permits, options)` takes its options second. */
  static readonly rxOptionsIndex: Readonly<Record<string, number>> = Object.freeze({ acquire: 1 });

  readonly #ctx: ClientContext;
  readonly #name: string;
  readonly #keys: ReturnType<typeof semaphoreKeys>;

  /** @internal Use `LockClient.getSemaphore(name)`. */
  constructor(ctx: ClientContext, name: string) {
    this.#ctx = ctx;
    this.#name = name;
    this.#keys = semaphoreKeys(ctx.options.keyPrefix, name);
  }

  /** The semaphore's name. */
  get name(): string {
    return this.#name;
  }

  /** Sets the number of permits if it was never set; true when it was set by this call. */
  async trySetPermits(permits: number): Promise<boolean> {
    checkInteger(permits, 'permits', 0);
    return (await this.#once(semaphoreTrySetPermits, [permits, this.#keys.channel])) === 1;
  }

  /** Adds permits; a negative number removes them (the count may go below zero). */
  async addPermits(permits: number): Promise<void> {
    checkInteger(permits, 'permits', -Number.MAX_SAFE_INTEGER);
    await this.#once(semaphoreAddPermits, [permits, this.#keys.channel]);
  }

  /**
   * Waits until `permits` permits are taken.
   * @example
   * ```ts
   * const api = locks.getSemaphore('partner-api');
   * await api.trySetPermits(5); // at most 5 calls at once, across every process
   * await api.acquire();
   * try {
   *   await callPartnerApi();
   * } finally {
   *   await api.release();
   * }
   * ```
   */
  async acquire(permits = 1, options?: SemaphoreAcquireOptions): Promise<void> {
    checkInteger(permits, 'permits', 1);
    const given = checkOptions<SemaphoreAcquireOptions>(options, ['signal']);
    await this.#take(permits, undefined, checkSignal(given.signal));
  }

  /** Takes `permits` (default 1) at once, or within `waitTime`; true when taken. */
  async tryAcquire(options?: SemaphoreTryAcquireOptions): Promise<boolean> {
    const given = checkOptions<SemaphoreTryAcquireOptions>(options, ['permits', 'waitTime', 'signal']);
    const permits = given.permits === undefined ? 1 : checkInteger(given.permits, 'permits', 1);
    const waitTime = checkOptionalDuration(given.waitTime, 'waitTime') ?? 0;
    return this.#take(permits, now() + waitTime, checkSignal(given.signal));
  }

  /** Returns `permits` (default 1) to the semaphore. Anyone may release, not only a taker. */
  async release(permits = 1): Promise<void> {
    checkInteger(permits, 'permits', 1);
    await this.#once(semaphoreAddPermits, [permits, this.#keys.channel]);
  }

  /** The number of permits available now (negative after `addPermits` removed more than were free). */
  async availablePermits(): Promise<number> {
    this.#ctx.assertOpen();
    return Number(await this.#ctx.run(semaphoreAvailable, [this.#keys.permits], []));
  }

  /** Takes every available permit; returns how many. */
  async drainPermits(): Promise<number> {
    return this.#once(semaphoreDrain, []);
  }

  /** Runs a change of the count under a marker of its own (see lib/once.lua), until its outcome is known. */
  async #once(script: Parameters<ClientContext['run']>[0], args: (string | number)[]): Promise<number> {
    this.#ctx.assertOpen();
    const { commandTimeout } = this.#ctx.options;
    const keys = [this.#keys.permits, this.#keys.op(newOwnerId())];
    const until = now() + commandTimeout;
    return Number(await runUntilKnown(this.#ctx.run, script, keys, [...args, 2 * commandTimeout], until));
  }

  async #take(permits: number, deadline: number | undefined, signal: AbortSignal | undefined): Promise<boolean> {
    this.#ctx.assertOpen();
    const { run, options } = this.#ctx;
    const k = this.#keys;
    // One id per acquisition: a repeated attempt finds its grant, a give-up can undo it.
    const id = newOwnerId();
    const remember = GRANT_MEMORY_TIMEOUTS * options.commandTimeout + MAX_RETRY_PAUSE_MS;
    // Only a caller that will wait takes a place in the queue.
    const waiterId = deadline !== undefined && deadline <= now() ? '' : id;
    const taken = await acquire<true>(
      {
        name: this.#name,
        kind: 'semaphore',
        grantKey: k.permits,
        channel: k.channel,
        async attempt(attemptDeadline): Promise<Attempt<true>> {
          const args = [permits, id, waiterId, options.fairWaiterTimeout, k.channel, remember];
          const retryIn = await run(semaphoreAcquire, [k.permits, k.queue, k.wants, k.grants], args, attemptDeadline);
          return retryIn === null ? { acquired: true, value: true } : { acquired: false, retryIn: Number(retryIn) };
        },
        async giveUp() {
          const keys = [k.permits, k.queue, k.wants, k.grants];
          await runUntilKnown(
            run,
            semaphoreGiveUp,
            keys,
            [id, permits, k.channel, remember],
            now() + options.commandTimeout,
          );
        },
      },
      this.#ctx,
      { deadline, signal },
    );
    return taken === true;
  }
}

/**
 * How long Redis remembers an acquisition's grant, in commandTimeouts, plus the longest retry
 * pause: as long as a call of that acquisition may still arrive. A granted attempt whose reply is
 * lost fails within one; failures are ridden out for one more; the attempt that ends the wait may
 * be sent after a retry pause (up to MAX_RETRY_PAUSE_MS after fast failures: more than a
 * commandTimeout under about 1 s) and fails within a third; the give-up is sent until a fourth. A
 * fifth leaves room for clocks and scheduling. Remembered for less, a late give-up finds no grant
 * and the permits are lost (model/semaphore.pml found the pause missing: docs/model.md).
 */
const GRANT_MEMORY_TIMEOUTS = 5;

/** Creates the semaphore returned by `LockClient.getSemaphore()`. */
export function createSemaphore(ctx: ClientContext, name: string): Semaphore {
  return new Semaphore(ctx, name);
}
