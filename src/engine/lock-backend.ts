import type { ClientContext } from '../context.js';
import type { ResolvedOptions } from '../options.js';
import type { LuaScript } from '../redis/connection.js';
import type { AcquireLoopOptions, Attempt, QueuedWait } from './acquire-loop.js';

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
  /**
   * False when the uncontended first attempt (one that neither queues nor subscribes) would likely
   * fail, so the wait goes first instead; left out: always worth it.
   */
  readonly worthTryingFirst?: () => boolean;
  /** Replaces the pub/sub wait (SpinLock polls with backoff instead). */
  readonly wait?: <T>(options: AcquireLoopOptions<T>) => Promise<T | undefined>;
}

/** The lease of a lock the watchdog keeps: watchdogTimeout, but no longer than maxLeaseTime. */
export function watchdogLease(options: ResolvedOptions): number {
  const { watchdogTimeout, maxLeaseTime } = options;
  return maxLeaseTime === undefined ? watchdogTimeout : Math.min(watchdogTimeout, maxLeaseTime);
}

/**
 * An attempt that failed in flight may still have taken the lock. When `owner` held nothing there
 * before, drop whatever it may hold now (sent on the same connection after the lost call, so Redis
 * runs it after that call even if the server was frozen); a re-entrant attempt cannot be undone
 * that way and is left to expire with its lease.
 */
export function releaseUncertain(ctx: ClientContext, backend: LockBackend, owner: string): void {
  if (ctx.holds.get(backend.key, owner)) return;
  backend.releaseAll(owner).catch(() => undefined);
}
