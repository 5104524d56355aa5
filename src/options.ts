/**
 * The LockClient options, their defaults, and the options of lock(), tryLock(), withLock() and
 * acquire().
 */
/** Options of a {@link LockClient}. Every field is optional; the defaults are in {@link DEFAULTS}. */
export interface LockClientOptions {
  /**
   * Prefix of every key and channel latchkey writes.
   * @default 'latchkey:'
   */
  keyPrefix?: string;
  /**
   * Lease given to a lock taken without `leaseTime`; the watchdog renews it every third of this.
   * A crashed holder's lock is free again within this time.
   * @default 30_000
   */
  watchdogTimeout?: number;
  /**
   * Upper bound on how long the watchdog keeps one lock alive; after it the lock expires even if
   * never released. Left out: no bound (as in Redisson).
   * @default undefined
   */
  maxLeaseTime?: number;
  /**
   * A fair-lock waiter that stops refreshing its place in the queue is skipped after this.
   * @default 10_000
   */
  fairWaiterTimeout?: number;
  /**
   * How long one Redis call may take before it fails with `RedisUnavailableError`. A call made
   * while waiting with a `waitTime` is also cut at that deadline.
   * @default 10_000
   */
  commandTimeout?: number;
  /**
   * How a holder learns that its lock is gone (deleted, taken over, expired early): `'push'` has
   * Redis tell at once (key tracking, on two connections of latchkey's own; standalone, and
   * Sentinel through ioredis), and renewal still finds what tracking cannot; `'renewal'` finds it
   * at the next renewal only (every third of `watchdogTimeout`), with no extra connection. On a
   * Cluster and through node-redis Sentinel, `'push'` works as `'renewal'`.
   * @default 'push'
   */
  lossDetection?: 'push' | 'renewal';
  /**
   * How many replicas must acknowledge an acquisition (a lock, a read or write hold, a permit)
   * before it counts: Redis' `WAIT` on the connection that wrote it, right after the grant. An
   * acquisition not acknowledged within `replicaAckTimeout` is tried again within the wait's
   * `waitTime` and `commandTimeout`, and then fails with `RedisUnavailableError` (never `false`).
   * It narrows the window in which a failover to a replica that never saw the grant gives the lock
   * to someone else; it does not make Redis a consensus system. 0: no acknowledgement asked.
   * @default 0
   */
  replicaAcks?: number;
  /**
   * How long an acquisition waits for `replicaAcks` replicas to acknowledge it, in ms.
   * @default 1_000
   */
  replicaAckTimeout?: number;
}

/** The resolved options: every field set (see {@link LockClientOptions} for what each means). */
export interface ResolvedOptions {
  /** See {@link LockClientOptions.keyPrefix}. */
  readonly keyPrefix: string;
  /** See {@link LockClientOptions.watchdogTimeout}. */
  readonly watchdogTimeout: number;
  /** See {@link LockClientOptions.maxLeaseTime}. */
  readonly maxLeaseTime: number | undefined;
  /** See {@link LockClientOptions.fairWaiterTimeout}. */
  readonly fairWaiterTimeout: number;
  /** See {@link LockClientOptions.commandTimeout}. */
  readonly commandTimeout: number;
  /** See {@link LockClientOptions.lossDetection}. */
  readonly lossDetection: 'push' | 'renewal';
  /** See {@link LockClientOptions.replicaAcks}. */
  readonly replicaAcks: number;
  /** See {@link LockClientOptions.replicaAckTimeout}. */
  readonly replicaAckTimeout: number;
}

/** Default options of a {@link LockClient}. */
export const DEFAULTS: Readonly<ResolvedOptions> = Object.freeze({
  keyPrefix: 'latchkey:',
  watchdogTimeout: 30_000,
  maxLeaseTime: undefined,
  fairWaiterTimeout: 10_000,
  commandTimeout: 10_000,
  lossDetection: 'push',
  replicaAcks: 0,
  replicaAckTimeout: 1_000,
});

/** Options of `lock()`. */
export interface LockOptions {
  /** The lock expires by itself after this many ms; left out, the watchdog keeps it alive. */
  leaseTime?: number;
  /** Aborting stops waiting and rejects with the signal's reason. */
  signal?: AbortSignal;
}

/** Options of `tryLock()`, `withLock()` and `acquire()`. */
export interface TryLockOptions extends LockOptions {
  /** How long to wait for the lock; left out, `tryLock` makes one attempt only. */
  waitTime?: number;
}
