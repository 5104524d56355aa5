import type { ClientContext } from '../context.js';
import { LockAcquireTimeoutError, LockNotHeldError } from '../errors.js';
import type { Lock, LockLease } from '../lock.js';
import type { LockOptions, TryLockOptions } from '../options.js';
import { currentScopeOwner, randomId, runAsOwner } from '../owner.js';
import type { LuaScript } from '../redis/connection.js';
import { checkFunction, checkOptionalDuration, checkOptions, checkSignal } from '../validate.js';
import { acquireLoop, type AcquireLoopOptions, type Attempt, type QueuedWait } from './acquire-loop.js';
import type { Hold } from './holds.js';
import { Lease } from '../lease.js';

/** A lock's state as one read returns it. */
export interface LockStatus {
  readonly locked: boolean;
  readonly holds: number;
  /** ms; -2: no such lock, -1: no expiry. */
  readonly ttl: number;
}

/**
 * What one kind of lock does in Redis: its scripts and keys. The handle adds everything else
 * (owners, waiting, watchdog, leases, validation), so each kind only writes what differs.
 * An acquired attempt's value is the fencing token, or null for locks without one.
 */
export interface LockBackend {
  readonly name: string;
  /** The key a hold is recorded, renewed and reported under. */
  readonly key: string;
  /** Where releases are announced. */
  readonly channel: string;
  /** Batch renewal script (see RenewalTarget). */
  readonly renewScript: LuaScript;
  /** One attempt; `place` is given inside a wait that queues (see QueuedWait). */
  attempt(
    owner: string,
    leaseMs: number,
    deadline: number | undefined,
    place?: QueuedWait,
  ): Promise<Attempt<bigint | null>>;
  /** Releases one hold: -1 when `owner` holds none, else the holds left. */
  release(owner: string): Promise<number>;
  /** Drops every hold of `owner`, undoing an attempt whose reply was lost. */
  releaseAll(owner: string): Promise<void>;
  forceUnlock(): Promise<boolean>;
  status(owner: string): Promise<LockStatus>;
  /** Replaces the pub/sub wait (SpinLock polls with backoff instead). */
  readonly wait?: <T>(options: AcquireLoopOptions<T>) => Promise<T | undefined>;
}

interface Acquired {
  readonly hold: Hold;
  readonly owner: string;
  readonly token: bigint | null;
}

interface ParsedOptions {
  readonly waitTime: number | undefined;
  readonly leaseTime: number | undefined;
  readonly signal: AbortSignal | undefined;
}

/** `lock()` / `tryLock()` called without options: nothing to check. */
const NO_OPTIONS: ParsedOptions = Object.freeze({ waitTime: undefined, leaseTime: undefined, signal: undefined });

function parseOptions(options: unknown, allowWait: boolean): ParsedOptions {
  if (options === undefined) return NO_OPTIONS;
  const given = checkOptions<TryLockOptions>(options);
  return {
    waitTime: allowWait ? checkOptionalDuration(given.waitTime, 'waitTime') : undefined,
    leaseTime: checkOptionalDuration(given.leaseTime, 'leaseTime', true),
    signal: checkSignal(given.signal),
  };
}

/** The Lock API over any LockBackend. */
export class LockHandle implements Lock {
  /** This handle's own owner id, used outside any scope(). */
  readonly #ownId = randomId(12);
  #ownOwner: string | undefined;

  constructor(
    protected readonly ctx: ClientContext,
    protected readonly backend: LockBackend,
  ) {}

  /** @internal How MultiLock / RedLock reach a member: its client context and backend. */
  get member(): { readonly ctx: ClientContext; readonly backend: LockBackend } {
    return { ctx: this.ctx, backend: this.backend };
  }

  get name(): string {
    return this.backend.name;
  }

  /** `<client id>:<owner id>`: the scope's owner if there is one, else this handle's own. */
  protected currentOwner(): string {
    const scoped = currentScopeOwner();
    // Outside a scope the same string every time: map lookups keyed by it hash nothing new.
    if (scoped === undefined) return (this.#ownOwner ??= `${this.ctx.clientId}:${this.#ownId}`);
    return `${this.ctx.clientId}:${scoped}`;
  }

  async lock(options?: LockOptions): Promise<void> {
    const parsed = parseOptions(options, false);
    await this.acquireHold(parsed);
  }

  async tryLock(options?: TryLockOptions): Promise<boolean> {
    const parsed = parseOptions(options, true);
    const { leaseTime, signal } = parsed;
    return (await this.acquireHold({ waitTime: parsed.waitTime ?? 0, leaseTime, signal })) !== undefined;
  }

  async unlock(): Promise<void> {
    this.ctx.assertOpen();
    await this.releaseHold(this.currentOwner());
  }

  async forceUnlock(): Promise<boolean> {
    this.ctx.assertOpen();
    return this.backend.forceUnlock();
  }

  async isLocked(): Promise<boolean> {
    return (await this.#status()).locked;
  }

  async isHeldByCurrentOwner(): Promise<boolean> {
    return (await this.#status()).holds > 0;
  }

  async getHoldCount(): Promise<number> {
    return (await this.#status()).holds;
  }

  async remainTimeToLive(): Promise<number> {
    return (await this.#status()).ttl;
  }

  async withLock<T>(fn: (signal: AbortSignal) => T | Promise<T>, options?: TryLockOptions): Promise<T> {
    checkFunction(fn, 'fn');
    const parsed = parseOptions(options, true);
    // Everything inside fn runs as this lock's owner, so nested locks of the same name re-enter.
    const owner = currentScopeOwner() ?? this.#ownId;
    return runAsOwner(owner, async () => {
      const acquired = await this.#acquireOrTimeout(parsed);
      let result: T;
      try {
        result = await fn(acquired.hold.signal);
      } catch (error) {
        await this.releaseHold(acquired.owner).catch(() => undefined);
        throw error;
      }
      await this.releaseHold(acquired.owner);
      return result;
    });
  }

  async acquire(options?: TryLockOptions): Promise<LockLease> {
    const acquired = await this.#acquireOrTimeout(parseOptions(options, true));
    return new Lease(acquired.hold.signal, () => this.releaseHold(acquired.owner), acquired.token ?? undefined);
  }

  async #acquireOrTimeout(parsed: ParsedOptions): Promise<Acquired> {
    const acquired = await this.acquireHold(parsed);
    if (!acquired) {
      throw new LockAcquireTimeoutError(`Could not acquire lock "${this.name}" within waitTime ${parsed.waitTime} ms`);
    }
    return acquired;
  }

  /** Acquires for the current owner; undefined when waitTime elapsed. */
  protected async acquireHold(parsed: ParsedOptions): Promise<Acquired | undefined> {
    this.ctx.assertOpen();
    const { options, holds, waiters } = this.ctx;
    const owner = this.currentOwner();
    const leaseMs = parsed.leaseTime ?? Math.min(options.watchdogTimeout, options.maxLeaseTime ?? Infinity);
    let acquiredAt = 0;
    const attempt = (deadline: number | undefined, place?: QueuedWait): Promise<Attempt<bigint | null>> => {
      const started = Date.now();
      return this.backend.attempt(owner, leaseMs, deadline, place).then(
        (result) => {
          if (result.acquired) acquiredAt = started;
          return result;
        },
        (error: unknown) => {
          this.#undoUncertainAttempt(owner);
          // Cut by the caller's own waitTime: that is the timeout they asked for, not an outage.
          if (deadline !== undefined && Date.now() >= deadline) return { acquired: false, retryIn: 0 };
          throw error;
        },
      );
    };
    const wait = this.backend.wait ?? acquireLoop;
    const token = await wait({
      attempt,
      waiters,
      channel: this.backend.channel,
      waitTime: parsed.waitTime,
      signal: parsed.signal,
      name: this.name,
    });
    if (token === undefined) return undefined;
    const { name, key, renewScript } = this.backend;
    const hold = holds.acquired(
      { name, key, field: owner, script: renewScript, leaseTime: parsed.leaseTime },
      acquiredAt,
    );
    if (parsed.signal?.aborted) {
      // Aborted while the winning attempt was in flight: leave nothing held.
      await this.releaseHold(owner).catch(() => undefined);
      throw parsed.signal.reason;
    }
    return { hold, owner, token };
  }

  /** Releases one hold of `owner`. Renewal stops whenever the lock is freed or the release fails. */
  protected async releaseHold(owner: string): Promise<void> {
    const { holds } = this.ctx;
    let left: number;
    try {
      left = await this.backend.release(owner);
    } catch (error) {
      const hold = holds.get(this.backend.key, owner);
      if (hold) holds.drop(hold);
      throw error;
    }
    if (left < 0) {
      const hold = holds.get(this.backend.key, owner);
      if (hold) holds.drop(hold);
      throw new LockNotHeldError(`Cannot unlock "${this.name}": it is not held by owner ${owner}`);
    }
    holds.released(this.backend.key, owner, left);
  }

  /**
   * An attempt that failed in flight may still have taken the lock. When this owner held nothing
   * before, drop whatever it may hold now; a re-entrant attempt cannot be undone that way and is
   * left to expire with its lease.
   */
  #undoUncertainAttempt(owner: string): void {
    if (this.ctx.holds.get(this.backend.key, owner)) return;
    this.backend.releaseAll(owner).catch(() => undefined);
  }

  async #status(): Promise<LockStatus> {
    this.ctx.assertOpen();
    return this.backend.status(this.currentOwner());
  }
}
