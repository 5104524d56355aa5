import type { ClientContext } from '../context.js';
import { LockAcquireTimeoutError, LockNotHeldError } from '../errors.js';
import type { Lock, LockLease } from '../lock.js';
import type { LockOptions, TryLockOptions } from '../options.js';
import { currentScopeOwner, randomId, runAsOwner } from '../owner.js';
import { checkFunction, checkOptionalDuration, checkOptions, checkSignal } from '../validate.js';
import { acquireLoop, failedAttempt, type Attempt, type QueuedWait } from './acquire-loop.js';
import type { Hold } from './holds.js';
import { releaseUncertain, watchdogLease, type LockBackend, type LockStatus } from './lock-backend.js';
import { Lease } from '../lease.js';

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
    const { waitTime, signal } = parsed;
    signal?.throwIfAborted();
    const owner = this.currentOwner();
    const leaseMs = parsed.leaseTime ?? watchdogLease(this.ctx.options);
    const started = Date.now();
    const deadline = waitTime === undefined ? undefined : started + waitTime;
    // The uncontended case: one attempt that neither queues nor subscribes, with nothing set up for
    // a wait (what a wait allocates costs a hot lock()/unlock() loop several percent).
    let first: Attempt<bigint | null> | undefined;
    if (this.backend.worthTryingFirst?.() ?? true) {
      try {
        // A single attempt (waitTime 0) is bounded by commandTimeout alone, not by a deadline of "now".
        first = await this.backend.attempt(owner, leaseMs, waitTime === 0 ? undefined : deadline);
      } catch (error) {
        first = this.#attemptFailed(owner, deadline, error);
      }
      if (first.acquired) return this.#held(owner, parsed, started, first.value);
      if (deadline !== undefined && Date.now() >= deadline) return undefined;
    }
    let acquiredAt = 0;
    const attempt = (attemptDeadline: number | undefined, place?: QueuedWait): Promise<Attempt<bigint | null>> => {
      const attemptStarted = Date.now();
      return this.backend.attempt(owner, leaseMs, attemptDeadline, place).then(
        (result) => {
          if (result.acquired) acquiredAt = attemptStarted;
          return result;
        },
        (error: unknown) => this.#attemptFailed(owner, attemptDeadline, error),
      );
    };
    const wait = this.backend.wait ?? acquireLoop;
    const token = await wait({
      attempt,
      waiters: this.ctx.waiters,
      channel: this.backend.channel,
      waitTime: deadline === undefined ? undefined : Math.max(0, deadline - Date.now()),
      signal,
      name: this.name,
      first,
    });
    if (token === undefined) return undefined;
    return this.#held(owner, parsed, acquiredAt, token);
  }

  /** An attempt failed in flight: undo what it may have taken, then see failedAttempt. */
  #attemptFailed(owner: string, deadline: number | undefined, error: unknown): Attempt<never> {
    releaseUncertain(this.ctx, this.backend, owner);
    return failedAttempt(deadline, error);
  }

  /** Records the hold Redis confirmed at `acquiredAt` (a promise only when the caller aborted meanwhile). */
  #held(owner: string, parsed: ParsedOptions, acquiredAt: number, token: bigint | null): Acquired | Promise<never> {
    const { name, key, renewScript } = this.backend;
    const hold = this.ctx.holds.acquired(
      { name, key, field: owner, script: renewScript, leaseTime: parsed.leaseTime },
      acquiredAt,
    );
    // Aborted while the winning attempt was in flight: leave nothing held.
    if (parsed.signal?.aborted) return this.#undoAborted(owner, parsed.signal.reason);
    return { hold, owner, token };
  }

  async #undoAborted(owner: string, reason: unknown): Promise<never> {
    await this.releaseHold(owner).catch(() => undefined);
    throw reason;
  }

  /** Releases one hold of `owner`. Renewal stops whenever the lock is freed or the release fails. */
  protected releaseHold(owner: string): Promise<void> {
    // A promise chain, not an async function: one frame less to resume on every unlock().
    return this.backend.release(owner).then(
      (left) => {
        if (left < 0) {
          this.#forget(owner);
          throw new LockNotHeldError(`Cannot unlock "${this.name}": it is not held by owner ${owner}`);
        }
        this.ctx.holds.released(this.backend.key, owner, left);
      },
      (error: unknown) => {
        this.#forget(owner);
        throw error;
      },
    );
  }

  #forget(owner: string): void {
    const { holds } = this.ctx;
    const hold = holds.get(this.backend.key, owner);
    if (hold) holds.drop(hold);
  }

  async #status(): Promise<LockStatus> {
    this.ctx.assertOpen();
    return this.backend.status(this.currentOwner());
  }
}
