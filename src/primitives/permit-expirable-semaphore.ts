/**
 * PermitExpirableSemaphore (getPermitExpirableSemaphore): permits with ids and optional leases;
 * a permit whose lease ran out returns to the pool by itself.
 */
import { now } from '../clock.js';
import type { ClientContext } from '../context.js';
import { acquire, type Attempt } from '../engine/acquire.js';
import { LockAcquireTimeoutError, LockNotHeldError } from '../errors.js';
import { permitExpirableSemaphoreKeys } from '../keys.js';
import { newOwnerId, randomId } from '../owner.js';
import { runUntilKnown } from '../redis/script-runner.js';
import {
  permitExpirableSemaphoreAcquire,
  permitExpirableSemaphoreAddPermits,
  permitExpirableSemaphoreAvailable,
  permitExpirableSemaphoreRelease,
  permitExpirableSemaphoreUpdateLease,
} from '../scripts/index.js';
import {
  checkDuration,
  checkInteger,
  checkName,
  checkOptionalDuration,
  checkOptions,
  checkSignal,
} from '../validate.js';

/** Options of {@link PermitExpirableSemaphore.acquire}. */
export interface PermitAcquireOptions {
  /** The permit returns to the pool by itself after this many ms. Left out: held until released. */
  leaseTime?: number;
  /** Aborting stops waiting, rejects with the signal's reason and leaves no permit taken. */
  signal?: AbortSignal;
}

/** Options of {@link PermitExpirableSemaphore.tryAcquire}. */
export interface PermitTryAcquireOptions extends PermitAcquireOptions {
  /** How long to wait for a permit (ms). Left out: one attempt only. */
  waitTime?: number;
}

/**
 * A semaphore whose permits have ids and optional leases (Redisson's RPermitExpirableSemaphore).
 * Redis keeps the total (a string without TTL: the semaphore's state) and a sorted set of the
 * permits out, by lease end. Available = total minus the permits whose lease has not run out,
 * so a permit of a crashed holder returns to the pool when its lease ends, without anyone
 * releasing it; waiters retry at that moment. Every change is safe to repeat when its reply was
 * lost: a permit's id names its acquisition, and releases and total changes leave a marker.
 */
export class PermitExpirableSemaphore {
  readonly #ctx: ClientContext;
  readonly #name: string;
  readonly #keys: ReturnType<typeof permitExpirableSemaphoreKeys>;

  /** @internal Use `LockClient.getPermitExpirableSemaphore(name)`. */
  constructor(ctx: ClientContext, name: string) {
    this.#ctx = ctx;
    this.#name = name;
    this.#keys = permitExpirableSemaphoreKeys(ctx.options.keyPrefix, name);
  }

  /** The semaphore's name. */
  get name(): string {
    return this.#name;
  }

  /** Sets the number of permits if it was never set; true when it was set by this call. */
  async trySetPermits(permits: number): Promise<boolean> {
    checkInteger(permits, 'permits', 0);
    return (await this.#changeTotal(permits, 'set')) === 1;
  }

  /** Adds permits to the total; a negative number removes them. */
  async addPermits(permits: number): Promise<void> {
    checkInteger(permits, 'permits', -Number.MAX_SAFE_INTEGER);
    await this.#changeTotal(permits, 'add');
  }

  /** Waits for a permit; resolves with its id (pass it to `release`). */
  async acquire(options?: PermitAcquireOptions): Promise<string> {
    const given = checkOptions<PermitAcquireOptions>(options, ['leaseTime', 'signal']);
    const leaseTime = checkOptionalDuration(given.leaseTime, 'leaseTime', true);
    const id = await this.#take(undefined, leaseTime, checkSignal(given.signal));
    if (id === null) throw new LockAcquireTimeoutError(`Could not acquire a permit of "${this.#name}"`);
    return id;
  }

  /** One attempt, or waits up to `waitTime`; the permit's id, or null when none was free. */
  async tryAcquire(options?: PermitTryAcquireOptions): Promise<string | null> {
    const given = checkOptions<PermitTryAcquireOptions>(options, ['waitTime', 'leaseTime', 'signal']);
    const waitTime = checkOptionalDuration(given.waitTime, 'waitTime') ?? 0;
    const leaseTime = checkOptionalDuration(given.leaseTime, 'leaseTime', true);
    return this.#take(now() + waitTime, leaseTime, checkSignal(given.signal));
  }

  /** Returns a permit; rejects with `LockNotHeldError` when it is unknown, released or expired. */
  async release(permitId: string): Promise<void> {
    if (!(await this.tryRelease(permitId))) {
      throw new LockNotHeldError(
        `Cannot release permit ${permitId} of "${this.#name}": it is not held (unknown, released or expired)`,
      );
    }
  }

  /** Returns a permit; false when it is unknown, released or expired. */
  async tryRelease(permitId: string): Promise<boolean> {
    checkName(permitId, 'permitId');
    this.#ctx.assertOpen();
    return (await this.#release(permitId)) === 1;
  }

  /** Permits free now (leases that ran out count as free). */
  async availablePermits(): Promise<number> {
    this.#ctx.assertOpen();
    const { total, leases, channel } = this.#keys;
    return Number(await this.#ctx.run(permitExpirableSemaphoreAvailable, [total, leases], [channel]));
  }

  /** Gives a permit still out a new lease of `leaseTime` ms from now; false when it is not out. */
  async updateLeaseTime(permitId: string, leaseTime: number): Promise<boolean> {
    checkName(permitId, 'permitId');
    checkDuration(leaseTime, 'leaseTime', true);
    this.#ctx.assertOpen();
    const { total, leases, channel } = this.#keys;
    const until = now() + this.#ctx.options.commandTimeout;
    const reply = await runUntilKnown(
      this.#ctx.run,
      permitExpirableSemaphoreUpdateLease,
      [total, leases],
      [channel, permitId, leaseTime],
      until,
    );
    return Number(reply) === 1;
  }

  async #changeTotal(permits: number, how: 'set' | 'add'): Promise<number> {
    this.#ctx.assertOpen();
    const { commandTimeout } = this.#ctx.options;
    const keys = [this.#keys.total, this.#keys.op(newOwnerId())];
    const args = [this.#keys.channel, permits, how, 2 * commandTimeout];
    const until = now() + commandTimeout;
    return Number(await runUntilKnown(this.#ctx.run, permitExpirableSemaphoreAddPermits, keys, args, until));
  }

  async #release(permitId: string): Promise<number> {
    const { commandTimeout } = this.#ctx.options;
    const { total, leases, channel } = this.#keys;
    // The marker is this call's own: a repeat finds it, a second release() by the user does not.
    const keys = [total, leases, this.#keys.op(newOwnerId())];
    const until = now() + commandTimeout;
    const args = [channel, permitId, 2 * commandTimeout];
    return Number(await runUntilKnown(this.#ctx.run, permitExpirableSemaphoreRelease, keys, args, until));
  }

  async #take(
    deadline: number | undefined,
    leaseTime: number | undefined,
    signal: AbortSignal | undefined,
  ): Promise<string | null> {
    this.#ctx.assertOpen();
    const { run } = this.#ctx;
    const { total, leases, channel } = this.#keys;
    // One id per acquisition: a repeated attempt finds its permit, a give-up releases exactly it.
    const id = randomId(16);
    const taken = await acquire<string>(
      {
        name: this.#name,
        kind: 'permit-expirable-semaphore',
        grantKey: leases,
        channel,
        async attempt(attemptDeadline): Promise<Attempt<string>> {
          const reply = await run(
            permitExpirableSemaphoreAcquire,
            [total, leases],
            [channel, id, leaseTime ?? ''],
            attemptDeadline,
          );
          return reply === null ? { acquired: true, value: id } : { acquired: false, retryIn: Number(reply) };
        },
        giveUp: async () => {
          await this.#release(id);
        },
      },
      this.#ctx,
      { deadline, signal },
    );
    return taken ?? null;
  }
}

/** Creates the semaphore returned by `LockClient.getPermitExpirableSemaphore()`. */
export function createPermitExpirableSemaphore(ctx: ClientContext, name: string): PermitExpirableSemaphore {
  return new PermitExpirableSemaphore(ctx, name);
}
