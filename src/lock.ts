import type { LockLease } from './lease.js';
import type { LockOptions, TryLockOptions } from './options.js';

/** A distributed lock. Every method is async; `await` takes the place of Java's blocking calls. */
export interface Lock {
  /** The lock's name. */
  readonly name: string;
  /** Waits until acquired. Without `leaseTime` the watchdog keeps the lock alive until `unlock()`. */
  lock(options?: LockOptions): Promise<void>;
  /** One attempt, or waits up to `waitTime`; true when acquired. */
  tryLock(options?: TryLockOptions): Promise<boolean>;
  /** Releases one hold; rejects with `LockNotHeldError` when the current owner holds none. */
  unlock(): Promise<void>;
  /** Deletes the lock whoever holds it; true when there was one. */
  forceUnlock(): Promise<boolean>;
  /** True when anyone holds the lock. */
  isLocked(): Promise<boolean>;
  /**
   * True when the current owner holds it: inside a holder's `withLock()` callback or a `scope()`,
   * that owner; elsewhere, the latest acquisition this handle made.
   */
  isHeldByCurrentOwner(): Promise<boolean>;
  /** The current owner's hold count (0 when it holds none). */
  getHoldCount(): Promise<number>;
  /** Remaining lease in ms: -2 when not locked, -1 when it has no expiry. */
  remainTimeToLive(): Promise<number>;
  /**
   * Acquires, runs `fn(signal)` as the lock's owner (nested locks re-enter), releases in `finally`.
   * Rejects with `LockAcquireTimeoutError` when `waitTime` elapses first.
   */
  withLock<T>(fn: (signal: AbortSignal) => T | Promise<T>, options?: TryLockOptions): Promise<T>;
  /** Acquires and returns a lease to release or dispose. Rejects with `LockAcquireTimeoutError` on timeout. */
  acquire(options?: TryLockOptions): Promise<LockLease>;
}
