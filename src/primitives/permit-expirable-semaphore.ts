import type { ClientContext } from '../context.js';
import { acquireLoop, type Attempt } from '../engine/acquire-loop.js';
import { LockAcquireTimeoutError, LockNotHeldError } from '../errors.js';
import { permitExpirableSemaphoreKeys } from '../keys.js';
import { randomId } from '../owner.js';
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
 * permits out, by lease expiry. Available = total minus the permits whose lease has not run out,
 * so a permit of a crashed holder returns to the pool when its lease ends, without anyone
 * releasing it; waiters retry at that moment.
 */
export class PermitExpirableSemaphore {
  readonly #ctx: ClientContext;
  readonly #name: string;
  readonly #keys: readonly string[];
  readonly #channel: string;

  /** @internal Use `LockClient.getPermitExpirableSemaphore(name)`. */
  constructor(ctx: ClientContext, name: string) {
    this.#ctx = ctx;
    this.#name = name;
    const keys = permitExpirableSemaphoreKeys(ctx.options.keyPrefix, name);
    this.#keys = [keys.total, keys.leases];
    this.#channel = keys.channel;
  }

  /** The semaphore's name. */
  get name(): string {
    return this.#name;
  }

  /** Sets the number of permits if it was never set; true when it was set by this call. */
  async trySetPermits(permits: number): Promise<boolean> {
    checkInteger(permits, 'permits', 0);
    return (await this.#run(permitExpirableSemaphoreAddPermits, [permits, 'set'])) === 1;
  }

  /** Adds permits to the total; a negative number removes them. */
  async addPermits(permits: number): Promise<void> {
    checkInteger(permits, 'permits', -Number.MAX_SAFE_INTEGER);
    await this.#run(permitExpirableSemaphoreAddPermits, [permits, 'add']);
  }

  /** Waits for a permit; resolves with its id (pass it to `release`). */
  async acquire(options?: PermitAcquireOptions): Promise<string> {
    const given = checkOptions<PermitAcquireOptions>(options);
    const leaseTime = checkOptionalDuration(given.leaseTime, 'leaseTime', true);
    const id = await this.#take(undefined, leaseTime, checkSignal(given.signal));
    if (id === null) throw new LockAcquireTimeoutError(`Could not acquire a permit of "${this.#name}"`);
    return id;
  }

  /** One attempt, or waits up to `waitTime`; the permit's id, or null when none was free. */
  async tryAcquire(options?: PermitTryAcquireOptions): Promise<string | null> {
    const given = checkOptions<PermitTryAcquireOptions>(options);
    const waitTime = checkOptionalDuration(given.waitTime, 'waitTime') ?? 0;
    const leaseTime = checkOptionalDuration(given.leaseTime, 'leaseTime', true);
    return this.#take(waitTime, leaseTime, checkSignal(given.signal));
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
    return (await this.#run(permitExpirableSemaphoreRelease, [permitId])) === 1;
  }

  /** Permits free now (leases that ran out count as free). */
  async availablePermits(): Promise<number> {
    return this.#run(permitExpirableSemaphoreAvailable, []);
  }

  /** Gives a permit still out a new lease of `leaseTime` ms from now; false when it is not out. */
  async updateLeaseTime(permitId: string, leaseTime: number): Promise<boolean> {
    checkName(permitId, 'permitId');
    checkDuration(leaseTime, 'leaseTime', true);
    return (await this.#run(permitExpirableSemaphoreUpdateLease, [permitId, leaseTime])) === 1;
  }

  async #run(
    script: Parameters<ClientContext['run']>[0],
    args: (string | number)[],
    deadline?: number,
  ): Promise<number> {
    this.#ctx.assertOpen();
    const reply = await this.#ctx.run(script, this.#keys, [this.#channel, ...args], deadline);
    return reply === null ? Number.NaN : Number(reply);
  }

  async #take(
    waitTime: number | undefined,
    leaseTime: number | undefined,
    signal: AbortSignal | undefined,
  ): Promise<string | null> {
    this.#ctx.assertOpen();
    const attempt = async (deadline: number | undefined): Promise<Attempt<string>> => {
      // A fresh id per attempt: a timed-out attempt is undone by releasing exactly its id.
      const id = randomId(16);
      try {
        const retryIn = await this.#run(permitExpirableSemaphoreAcquire, [id, leaseTime ?? ''], deadline);
        return Number.isNaN(retryIn) ? { acquired: true, value: id } : { acquired: false, retryIn };
      } catch (error) {
        this.tryRelease(id).catch(() => undefined);
        if (deadline !== undefined && Date.now() >= deadline) return { acquired: false, retryIn: 0 };
        throw error;
      }
    };
    const { waiters } = this.#ctx;
    const id = await acquireLoop({ attempt, waiters, channel: this.#channel, waitTime, signal, name: this.#name });
    if (id === undefined) return null;
    if (signal?.aborted) {
      // Aborted while the winning attempt was in flight: leave no permit taken.
      await this.tryRelease(id).catch(() => undefined);
      throw signal.reason;
    }
    return id;
  }
}

/** Creates the semaphore returned by `LockClient.getPermitExpirableSemaphore()`. */
export function createPermitExpirableSemaphore(ctx: ClientContext, name: string): PermitExpirableSemaphore {
  return new PermitExpirableSemaphore(ctx, name);
}
