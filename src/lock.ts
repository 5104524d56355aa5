/**
 * The Lock interface every lock of latchkey implements (plain, fair, spin, fenced, read and write
 * sides, MultiLock, RedLock).
 */
import type { LockLease } from './lease.js';
import type { LockOptions, TryLockOptions } from './options.js';

/** A distributed lock. Every method is async; `await` takes the place of Java's blocking calls. */
export interface Lock {
  /** The lock's name. */
  readonly name: string;
  /**
   * Waits until acquired. Without `leaseTime` the watchdog keeps the lock alive until `unlock()`.
   * @example
   * ```ts
   * const stock = locks.getLock('stock:10100101');
   * await stock.lock();
   * try {
   *   await updateStock();
   * } finally {
   *   await stock.unlock();
   * }
   * ```
   */
  lock(options?: LockOptions): Promise<void>;
  /**
   * One attempt, or waits up to `waitTime`; true when acquired, false when someone else holds it.
   * Rejects with `RedisUnavailableError` when Redis cannot be reached (never false).
   * @example
   * ```ts
   * if (await locks.getLock('report').tryLock({ waitTime: 2_000, leaseTime: 10_000 })) {
   *   // held for at most 10 s; no unlock() needed if the work outlives it
   * }
   * ```
   */
  tryLock(options?: TryLockOptions): Promise<boolean>;
  /**
   * Releases one hold; rejects with `LockNotHeldError` when the current owner holds none, and with
   * its subclass `LockLostError` when the hold was lost. Outside a holder's callback or a scope,
   * it releases the latest `lock()`/`tryLock()` of this handle: a lock is unlocked through the
   * handle that took it, not through a fresh `getLock(name)`.
   */
  unlock(): Promise<void>;
  /** Deletes the lock whoever holds it; true when there was one. */
  forceUnlock(): Promise<boolean>;
  /** True when anyone holds the lock. */
  isLocked(): Promise<boolean>;
  /**
   * True when the current owner holds it: inside a holder's `withLock()` callback, that holder
   * (also in a `scope()` opened inside it); inside a `scope()`, the scope's owner; elsewhere, the
   * latest acquisition this handle made (`lock()`, `tryLock()` or `acquire()`) that is not released.
   */
  isHeldByCurrentOwner(): Promise<boolean>;
  /** The current owner's hold count (0 when it holds none). */
  getHoldCount(): Promise<number>;
  /** Remaining lease in ms: -2 when not locked, -1 when it has no expiry. */
  remainTimeToLive(): Promise<number>;
  /**
   * Acquires, runs `fn(signal)` as the lock's owner (nested locks re-enter), releases in `finally`.
   * `signal` aborts with `LockLostError` the moment the lock is known lost. Rejects with
   * `LockAcquireTimeoutError` when `waitTime` elapses first.
   * @example
   * ```ts
   * const total = await locks.getLock('order:42').withLock(async (signal) => {
   *   const order = await loadOrder(42);
   *   signal.throwIfAborted(); // the lock was lost: write nothing
   *   return charge(order);
   * }, { waitTime: 5_000 });
   * ```
   */
  withLock<T>(fn: (signal: AbortSignal) => T | Promise<T>, options?: TryLockOptions): Promise<T>;
  /**
   * Acquires and returns a lease to release or dispose. Rejects with `LockAcquireTimeoutError` on
   * timeout.
   * @example
   * ```ts
   * await using lease = await locks.getLock('job:7').acquire({ waitTime: 1_000 });
   * await runJob(lease.signal); // released when the block ends
   * ```
   */
  acquire(options?: TryLockOptions): Promise<LockLease>;
}
