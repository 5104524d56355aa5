/**
 * CountDownLatch (getCountDownLatch): a count set once, counted down from anywhere, awaited by
 * waiters woken by pub/sub when it reaches 0.
 */
import { now } from '../clock.js';
import type { ClientContext } from '../context.js';
import { acquire } from '../engine/acquire.js';
import { countDownLatchKeys } from '../keys.js';
import { newOwnerId } from '../owner.js';
import { runUntilKnown } from '../redis/script-runner.js';
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
 * or the latch is deleted; a latch never set, or at 0, leaves no key behind and counts 0. Every
 * change is safe to repeat when its reply was lost (a marker per call): a countDown() sent
 * twice counts once.
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
  /**
   * Waits until the count is 0: true when it is, false when `waitTime` elapsed first.
   * @example
   * ```ts
   * const shards = locks.getCountDownLatch('import:2026-11-26');
   * await shards.trySetCount(8); // each of 8 workers calls countDown() when its shard is done
   * if (await shards.await({ waitTime: 60_000 })) await publishImport();
   * ```
   */
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
  readonly #keys: ReturnType<typeof countDownLatchKeys>;

  constructor(
    private readonly ctx: ClientContext,
    readonly name: string,
  ) {
    this.#keys = countDownLatchKeys(ctx.options.keyPrefix, name);
  }

  async trySetCount(count: number): Promise<boolean> {
    checkInteger(count, 'count', 0);
    return (await this.#once(countDownLatchTrySetCount, [count])) === 1;
  }

  async countDown(): Promise<void> {
    await this.#once(countDownLatchCountDown, [this.#keys.channel]);
  }

  async getCount(): Promise<number> {
    this.ctx.assertOpen();
    return Number(await this.ctx.run(countDownLatchGetCount, [this.#keys.count], []));
  }

  async await(options?: AwaitOptions): Promise<boolean> {
    const given = checkOptions<AwaitOptions>(options, ['waitTime', 'signal']);
    const waitTime = checkOptionalDuration(given.waitTime, 'waitTime');
    const signal = checkSignal(given.signal);
    this.ctx.assertOpen();
    const { run } = this.ctx;
    const key = this.#keys.count;
    const reached = await acquire<true>(
      {
        name: this.name,
        kind: 'count-down-latch',
        channel: this.#keys.channel,
        async attempt(deadline) {
          const count = Number(await run(countDownLatchGetCount, [key], [], deadline));
          return count === 0 ? { acquired: true, value: true } : { acquired: false, retryIn: LOST_MESSAGE_RECHECK_MS };
        },
        // Waiting takes nothing.
        giveUp: () => Promise.resolve(),
      },
      this.ctx,
      { deadline: waitTime === undefined ? undefined : now() + waitTime, signal },
    );
    return reached ?? false;
  }

  async delete(): Promise<boolean> {
    return (await this.#once(countDownLatchDelete, [this.#keys.channel])) === 1;
  }

  /** Runs a change of the count under a marker of its own (see lib/once.lua), until its outcome is known. */
  async #once(script: Parameters<ClientContext['run']>[0], args: (string | number)[]): Promise<number> {
    this.ctx.assertOpen();
    const { commandTimeout } = this.ctx.options;
    const keys = [this.#keys.count, this.#keys.op(newOwnerId())];
    const until = now() + commandTimeout;
    return Number(await runUntilKnown(this.ctx.run, script, keys, [...args, 2 * commandTimeout], until));
  }
}

/** Creates the latch returned by `LockClient.getCountDownLatch()`. */
export function createCountDownLatch(ctx: ClientContext, name: string): CountDownLatch {
  return new RedisCountDownLatch(ctx, name);
}
