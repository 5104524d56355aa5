/**
 * LockHandle, the one implementation of the Lock API (lock, tryLock, withLock, acquire, unlock...)
 * over a LockCore; it remembers the acquisitions each handle made.
 */
import { now } from '../clock.js';
import { LockAcquireTimeoutError, LockNotHeldError } from '../errors.js';
import { LockLease } from '../lease.js';
import type { Lock } from '../lock.js';
import type { LockOptions, TryLockOptions } from '../options.js';
import { contextOwner, newOwnerId, runHolding } from '../owner.js';
import { checkFunction, checkOptionalDuration, checkOptionalLease, checkOptions, checkSignal } from '../validate.js';
import type { AcquireRequest, HeldLock, LockCore } from './lock-core.js';

/** The core of a Lock made by a LockClient (MultiLock reaches its members through it); undefined for anything else. */
export function coreOf(lock: unknown): LockCore | undefined {
  return LockHandle.coreOf(lock);
}

const LOCK_OPTIONS = ['leaseTime', 'signal'] as const;
const TRY_LOCK_OPTIONS = ['waitTime', 'leaseTime', 'signal'] as const;

/** Checks the options of lock() (no waitTime: wait until acquired) or tryLock() & co. */
/** `lock()` without options: nothing to check. */
const NO_OPTIONS: AcquireRequest = Object.freeze({});

export function toRequest(options: unknown, withWait: boolean): AcquireRequest & { readonly waitTime?: number } {
  if (options === undefined) return NO_OPTIONS;
  const given = checkOptions<TryLockOptions>(options, withWait ? TRY_LOCK_OPTIONS : LOCK_OPTIONS);
  const waitTime = checkOptionalDuration(given.waitTime, 'waitTime');
  return {
    waitTime,
    leaseTime: checkOptionalLease(given.leaseTime, 'leaseTime'),
    signal: checkSignal(given.signal),
    deadline: waitTime === undefined ? undefined : now() + waitTime,
  };
}

/** An owner id that holds nothing: status reads for a handle that holds nothing. */
const NOBODY = 'nobody';

/**
 * The Lock API over any LockCore. Every acquisition is a new owner, so that concurrent tasks
 * sharing one handle exclude each other like two processes, unless it runs inside the callback
 * of a `withLock()` (or a `scope()`) that holds this lock: then it re-enters as that owner.
 * `unlock()` outside such a callback releases the most recent acquisition this handle made.
 */
export class LockHandle implements Lock {
  /**
   * This handle's acquisitions made outside a holder's callback or scope, oldest first: `lease`
   * ones (acquire()) are released through their lease, the others by `unlock()`.
   */
  readonly #acquisitions: { readonly owner: string; readonly lease: boolean }[] = [];

  constructor(protected readonly core: LockCore) {}

  /** See coreOf: only a LockHandle has the private field, whatever else an object carries. */
  static coreOf(lock: unknown): LockCore | undefined {
    return typeof lock === 'object' && lock !== null && #acquisitions in lock ? lock.core : undefined;
  }

  get name(): string {
    return this.core.name;
  }

  /** The owner the current context acquires and releases as, if it names one. */
  #contextOwner(): string | undefined {
    return contextOwner(this.core.identities[0]!);
  }

  // The hot path (lock(), tryLock(), unlock()) chains promises rather than nesting async functions:
  // each async layer cost every lock()/unlock() pair its own frame and promise (bench/README.md).
  lock(options?: LockOptions): Promise<void> {
    return started(() => this.take(toRequest(options, false), 'unlock')).then(nothing);
  }

  tryLock(options?: TryLockOptions): Promise<boolean> {
    return started(() => {
      const request = toRequest(options, true);
      return this.take({ ...request, deadline: request.deadline ?? now() }, 'unlock');
    }).then(isTaken);
  }

  /**
   * Acquires as the context's owner, or as a new one; `record`: a new owner is remembered for
   * this handle's `unlock()`.
   */
  protected take(request: AcquireRequest, record: 'unlock' | 'lease' | false): Promise<Taken | undefined> {
    const context = this.#contextOwner();
    const owner = context ?? newOwnerId();
    const shared = context !== undefined;
    // A new owner is this call's alone: nothing else can use it before it returns.
    return this.core.acquire(owner, request, shared).then((held) => {
      if (held === undefined) return undefined;
      if (record && !shared) this.#acquisitions.push({ owner, lease: record === 'lease' });
      return { owner, held, shared };
    });
  }

  /** Forgets the acquisition of `owner` (released through its lease). */
  #forget(owner: string): void {
    const index = this.#acquisitions.findIndex((acquisition) => acquisition.owner === owner);
    if (index !== -1) this.#acquisitions.splice(index, 1);
  }

  unlock(): Promise<void> {
    const context = this.#contextOwner();
    if (context !== undefined) return this.core.release(context).then(nothing);
    // Taken off the handle first, so that another unlock() meanwhile releases another acquisition
    // (or says none is held). An acquisition outside a context holds the lock once.
    const index = this.#acquisitions.findLastIndex((acquisition) => !acquisition.lease);
    if (index === -1) return Promise.reject(new LockNotHeldError(notHeldByHandle(this.name)));
    const { owner } = this.#acquisitions.splice(index, 1)[0]!;
    return this.core.release(owner, false).then(nothing);
  }

  forceUnlock(): Promise<boolean> {
    return this.core.forceUnlock();
  }

  async isLocked(): Promise<boolean> {
    return (await this.core.status(NOBODY)).locked;
  }

  async isHeldByCurrentOwner(): Promise<boolean> {
    return (await this.getHoldCount()) > 0;
  }

  async getHoldCount(): Promise<number> {
    const owner = this.#contextOwner() ?? this.#acquisitions.at(-1)?.owner;
    return (await this.core.status(owner ?? NOBODY)).holds;
  }

  async remainTimeToLive(): Promise<number> {
    return (await this.core.status(NOBODY)).ttl;
  }

  async withLock<T>(fn: (signal: AbortSignal) => T | Promise<T>, options?: TryLockOptions): Promise<T> {
    checkFunction(fn, 'fn');
    const { owner, held } = await this.#acquireOrTimeout(toRequest(options, true));
    let result: T;
    try {
      // Inside fn this lock re-enters for its owner; any other lock is a new owner as usual.
      result = await runHolding(this.core.identities, owner, () => fn(held.liveness.signal));
    } catch (error) {
      await this.core.release(owner).catch(() => undefined);
      throw error;
    }
    // Rejects with LockLostError when the lock was lost meanwhile: fn's work was not protected.
    await this.core.release(owner);
    return result;
  }

  async acquire(options?: TryLockOptions): Promise<LockLease> {
    const { owner, held, shared } = await this.#acquireOrTimeout(toRequest(options, true), 'lease');
    return new LockLease(held, async () => {
      this.#forget(owner);
      await this.core.release(owner, shared);
    });
  }

  async #acquireOrTimeout(
    request: AcquireRequest & { readonly waitTime?: number },
    record: 'lease' | false = false,
  ): Promise<Taken> {
    const taken = await this.take(request, record);
    if (!taken) {
      throw new LockAcquireTimeoutError(`Could not acquire lock "${this.name}" within waitTime ${request.waitTime} ms`);
    }
    return taken;
  }
}

/** What an acquisition through a handle made: its owner, its hold, and whether others use that owner too. */
interface Taken {
  readonly owner: string;
  readonly held: HeldLock;
  readonly shared: boolean;
}

const nothing = (): void => undefined;
const isTaken = (taken: Taken | undefined): boolean => taken !== undefined;

/** `start()`'s promise, with a synchronous throw (bad options) as its rejection. */
function started<T>(start: () => Promise<T>): Promise<T> {
  try {
    return start();
  } catch (error) {
    return Promise.reject(error);
  }
}

/** Why `unlock()` found nothing to release: and the usual cause, a handle that never locked. */
function notHeldByHandle(name: string): string {
  return (
    `Cannot unlock "${name}": this handle holds no acquisition of it that unlock() can release. ` +
    'Every lock() is an owner of its own, released through the handle that took it: a fresh ' +
    '`getLock(name).unlock()` (a Redisson habit) does not release the lock taken through another handle, ' +
    'which stays held (and renewed). Unlock through the handle that locked, or take and release inside ' +
    '`withLock()` or `client.scope()`. A lock taken with acquire() is released by its lease.'
  );
}
