import type { ClientContext } from '../context.js';
import { acquireLoop, type Attempt } from '../engine/acquire-loop.js';
import { countDownLatchKeys } from '../keys.js';
import {
  countDownLatchCountDown,
  countDownLatchDelete,
  countDownLatchGetCount,
  countDownLatchTrySetCount,
} from '../scripts/index.js';
import { checkInteger, checkOptionalDuration, checkOptions, checkSignal } from '../validate.js';

/** Options of {@link CountDownLatch.await}. */
export interface AwaitOptions {
  /** Longest wait in ms; left out: wait until the count reaches 0. 0: check once. */
  readonly waitTime?: number;
  /** Aborting stops the wait and rejects with the signal's reason. */
  readonly signal?: AbortSignal;
}

/**
 * A distributed count-down latch (Redisson's RCountDownLatch): one party sets a count, others count
 * it down, and every waiter in every process is woken by pub/sub the moment it reaches 0.
 *
 * The count is kept in Redis without a TTL (it must outlive any one process) until it reaches 0
 * or the latch is deleted; a latch never set, or at 0, leaves no key behind and counts 0.
 */
export interface CountDownLatch {
  /** The latch's name. */
  readonly name: string;
  /** Sets the count when no latch is set (count > 0); true when set. A count of 0 stores nothing. */
  trySetCount(count: number): Promise<boolean>;
  /** Decrements the count; reaching 0 deletes the latch and wakes every waiter. No-op when not set. */
  countDown(): Promise<void>;
  /** The current count; 0 when no latch is set. */
  getCount(): Promise<number>;
  /** Waits until the count is 0: true when it is, false when `waitTime` elapsed first. */
  await(options?: AwaitOptions): Promise<boolean>;
  /** Deletes the latch whatever its count (waiters wake and see 0); true when one was set. */
  delete(): Promise<boolean>;
}

/**
 * A waiter re-reads the count this often even without a message, so a message lost while the
 * subscriber reconnected delays it rather than strands it. Not polling: one read a minute.
 */
const LOST_MESSAGE_RECHECK_MS = 60_000;

class RedisCountDownLatch implements CountDownLatch {
  readonly #key: string;
  readonly #channel: string;

  constructor(
    private readonly ctx: ClientContext,
    readonly name: string,
  ) {
    const keys = countDownLatchKeys(ctx.options.keyPrefix, name);
    this.#key = keys.count;
    this.#channel = keys.channel;
  }

  async trySetCount(count: number): Promise<boolean> {
    checkInteger(count, 'count', 0);
    this.ctx.assertOpen();
    return Number(await this.ctx.run(countDownLatchTrySetCount, [this.#key], [count])) === 1;
  }

  async countDown(): Promise<void> {
    this.ctx.assertOpen();
    await this.ctx.run(countDownLatchCountDown, [this.#key], [this.#channel]);
  }

  async getCount(): Promise<number> {
    this.ctx.assertOpen();
    return Number(await this.ctx.run(countDownLatchGetCount, [this.#key], []));
  }

  async await(options?: AwaitOptions): Promise<boolean> {
    const given = checkOptions<AwaitOptions>(options);
    const waitTime = checkOptionalDuration(given.waitTime, 'waitTime');
    const signal = checkSignal(given.signal);
    this.ctx.assertOpen();
    const attempt = async (deadline: number | undefined): Promise<Attempt<true>> => {
      try {
        const count = Number(await this.ctx.run(countDownLatchGetCount, [this.#key], [], deadline));
        return count === 0 ? { acquired: true, value: true } : { acquired: false, retryIn: LOST_MESSAGE_RECHECK_MS };
      } catch (error) {
        // Cut by the caller's own waitTime: that is the timeout they asked for, not an outage.
        if (deadline !== undefined && Date.now() >= deadline) return { acquired: false, retryIn: 0 };
        throw error;
      }
    };
    const reached = await acquireLoop({
      attempt,
      waiters: this.ctx.waiters,
      channel: this.#channel,
      waitTime,
      signal,
      name: this.name,
    });
    return reached ?? false;
  }

  async delete(): Promise<boolean> {
    this.ctx.assertOpen();
    return Number(await this.ctx.run(countDownLatchDelete, [this.#key], [this.#channel])) === 1;
  }
}

/** Creates the latch returned by `LockClient.getCountDownLatch()`. */
export function createCountDownLatch(ctx: ClientContext, name: string): CountDownLatch {
  return new RedisCountDownLatch(ctx, name);
}
