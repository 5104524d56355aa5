/**
 * LockClient, the entry point: resolves the options, builds the client context every primitive
 * runs on (watchdog, waiters, livenesses, loss detector, server checks), hands out the primitives,
 * and emits lockLost, renewalError and warning.
 */
import { EventEmitter, setMaxListeners } from 'node:events';
import { createSerializer, type ClientContext } from './context.js';
import { listening, type LatchkeyWarning } from './diagnostics.js';
import { Livenesses } from './engine/liveness.js';
import { ServerChecks } from './engine/server-checks.js';
import { Waiters } from './engine/waiters.js';
import { Watchdog } from './engine/watchdog.js';
import { ShutDownError, type LockLostError } from './errors.js';
import type { Lock } from './lock.js';
import { createLossDetector } from './loss/loss-detector.js';
import { DEFAULTS, type LockClientOptions, type ResolvedOptions } from './options.js';
import { inScope, newOwnerId, randomId, runInScope } from './owner.js';
import { createCountDownLatch, type CountDownLatch } from './primitives/count-down-latch.js';
import { createFairLock } from './primitives/fair-lock.js';
import { createFencedLock, type FencedLock } from './primitives/fenced-lock.js';
import { createMultiLock } from './primitives/multi-lock/multi-lock.js';
import {
  createPermitExpirableSemaphore,
  type PermitExpirableSemaphore,
} from './primitives/permit-expirable-semaphore.js';
import { createReadWriteLock, type ReadWriteLock } from './primitives/read-write-lock.js';
import { createLock } from './primitives/reentrant-lock.js';
import { createSemaphore, type Semaphore } from './primitives/semaphore.js';
import { createSpinLock, resolveBackoff, type SpinBackoff } from './primitives/spin-lock.js';
import { createStripedLock, type StripedLock } from './primitives/striped-lock.js';
import { createScriptRunner } from './redis/script-runner.js';
import { toConnection, type RedisClientLike } from './redis/to-connection.js';
import {
  checkChoice,
  checkDuration,
  checkFunction,
  checkInteger,
  checkLease,
  checkName,
  checkOptionalLease,
  checkOptions,
} from './validate.js';

/** Events of a {@link LockClient}. */
export interface LockClientEvents {
  /** A held lock was lost (renewal found it gone, renewal failed past its lease, or its lease ran out). */
  lockLost: [name: string, error: LockLostError];
  /** A renewal call failed; the watchdog keeps trying until the lease runs out. */
  renewalError: [error: unknown, names: readonly string[]];
  /**
   * Something weakens a guarantee or turns a feature off (a server that may evict locks, loss
   * detection by push unavailable, ...): told once per `code`. Without a listener it goes to
   * `process.emitWarning()`.
   */
  warning: [warning: LatchkeyWarning];
}

const OPTIONS = [
  'keyPrefix',
  'watchdogTimeout',
  'maxLeaseTime',
  'fairWaiterTimeout',
  'commandTimeout',
  'lossDetection',
  'replicaAcks',
  'replicaAckTimeout',
] as const;

/** The option given, or its default when left out (`null` is given, and refused by the check). */
const orDefault = <K extends keyof ResolvedOptions>(value: unknown, key: K): unknown =>
  value === undefined ? DEFAULTS[key] : value;

function resolveOptions(options: unknown): ResolvedOptions {
  const given = checkOptions<LockClientOptions>(options, OPTIONS);
  return Object.freeze({
    keyPrefix: given.keyPrefix === undefined ? DEFAULTS.keyPrefix : checkName(given.keyPrefix, 'keyPrefix'),
    watchdogTimeout: checkLease(orDefault(given.watchdogTimeout, 'watchdogTimeout'), 'watchdogTimeout'),
    maxLeaseTime: checkOptionalLease(given.maxLeaseTime, 'maxLeaseTime'),
    fairWaiterTimeout: checkDuration(
      orDefault(given.fairWaiterTimeout, 'fairWaiterTimeout'),
      'fairWaiterTimeout',
      true,
    ),
    commandTimeout: checkDuration(orDefault(given.commandTimeout, 'commandTimeout'), 'commandTimeout', true),
    lossDetection: checkChoice(orDefault(given.lossDetection, 'lossDetection'), 'lossDetection', ['push', 'renewal']),
    replicaAcks: checkInteger(orDefault(given.replicaAcks, 'replicaAcks'), 'replicaAcks', 0),
    replicaAckTimeout: checkDuration(
      orDefault(given.replicaAckTimeout, 'replicaAckTimeout'),
      'replicaAckTimeout',
      true,
    ),
  });
}

/** The internals behind each LockClient, for tests and benchmarks (never part of the public types). */
const contexts = new WeakMap<LockClient, ClientContext>();

/** @internal The context primitives of `client` are built on. */
export function contextOf(client: LockClient): ClientContext {
  return contexts.get(client)!;
}

/**
 * The entry point: one per Redis client (ioredis `Redis`/`Cluster`, node-redis, or a
 * `RedisConnection` of your own). It owns one watchdog and one set of subscriptions for every
 * lock it hands out.
 * @example
 * ```ts
 * import { Redis } from 'ioredis';
 * import { LockClient } from 'latchkey';
 *
 * const locks = new LockClient(new Redis(), { watchdogTimeout: 30_000 });
 * await locks.getLock('order:42').withLock(() => chargeOrder(42));
 * await locks.shutdown(); // at process exit: stops renewals; held locks expire by themselves
 * ```
 */
export class LockClient extends EventEmitter<LockClientEvents> {
  /** Random id of this client (128 bits from `crypto`); owner ids start with it. */
  readonly id = randomId(16);
  /** The resolved options, frozen. */
  readonly options: ResolvedOptions;
  readonly #ctx: ClientContext;
  #shutdown: Promise<void> | undefined;
  readonly #closing = new AbortController();

  constructor(redis: RedisClientLike, options?: LockClientOptions) {
    super();
    // Every wait in flight (a subscription being made, a pause between tries) listens on it and
    // stops listening when it ends: as many listeners as waits, which Node would take for a leak.
    setMaxListeners(Infinity, this.#closing.signal);
    this.options = resolveOptions(options);
    const connection = toConnection(redis);
    if (this.options.replicaAcks > 0 && !connection.waitForReplicas) {
      throw new TypeError('`replicaAcks` needs a connection that can send WAIT (ioredis or node-redis)');
    }
    const { commandTimeout, watchdogTimeout } = this.options;
    const run = createScriptRunner(connection, commandTimeout);
    const warn = this.#warnOnce();
    const loss = createLossDetector({ mode: this.options.lossDetection, connection, run, commandTimeout, warn });
    this.#ctx = {
      clientId: this.id,
      options: this.options,
      connection,
      run,
      waiters: new Waiters(connection, commandTimeout, this.#closing.signal),
      watchdog: new Watchdog({
        watchdogTimeout,
        // With loss detection by push, renewals go on the tracking connection (see PushDetector.renew).
        renew: loss.renew,
        batchGroup: (key) => connection.batchGroup(key),
        onRenewalError: (error, names) => this.emit('renewalError', error, names),
      }),
      livenesses: new Livenesses((hold, error) => this.emit('lockLost', hold.name, error)),
      loss,
      holds: new Map(),
      serially: createSerializer(),
      assertOpen: () => {
        if (this.#shutdown) throw new ShutDownError('This LockClient was shut down');
      },
      closing: this.#closing.signal,
      warn,
      servers: new ServerChecks(run, (key) => connection.batchGroup(key), warn),
    };
    contexts.set(this, this.#ctx);
  }

  /** Emits each warning code once: on `warning`, or through `process.emitWarning()` when nobody listens. */
  #warnOnce(): (code: string, message: string) => void {
    const told = new Set<string>();
    return (code, message) => {
      if (told.has(code)) return;
      told.add(code);
      const warning: LatchkeyWarning = Object.freeze({ code, message });
      listening('warning')?.publish(warning);
      if (this.listenerCount('warning') > 0) this.emit('warning', warning);
      else process.emitWarning(message, { type: 'LatchkeyWarning', code: `LATCHKEY_${code}` });
    };
  }

  /**
   * The re-entrant lock `name`, kept alive by the watchdog when taken without a lease. Handles are
   * cheap; one handle may be shared by concurrent tasks (each acquisition is an owner of its own).
   * @example
   * ```ts
   * const orders = locks.getLock('orders'); // module level, shared by every request
   * await orders.withLock(() => placeOrder());
   * ```
   */
  getLock(name: string): Lock {
    return createLock(this.#ctx, checkName(name, 'name'));
  }

  /**
   * A lock over several member locks (from any clients, on independent Redis servers), held only
   * when every member is held. Members of one attempt are taken in parallel.
   */
  getMultiLock(...locks: Lock[]): Lock {
    return createMultiLock(this.#ctx, locks, 'MultiLock');
  }

  /**
   * Redlock over several member locks, each on its own independent Redis server: held when a
   * majority of members is held within the lease's validity. Rejects with `QuorumError` when no
   * majority can be reached.
   */
  getRedLock(...locks: Lock[]): Lock {
    return createMultiLock(this.#ctx, locks, 'RedLock');
  }

  /** The read-write lock `name`: `readLock()` shared by readers, `writeLock()` exclusive. */
  getReadWriteLock(name: string): ReadWriteLock {
    return createReadWriteLock(this.#ctx, checkName(name, 'name'));
  }

  /** The count-down latch `name`; waiters are woken by pub/sub when its count reaches 0. */
  getCountDownLatch(name: string): CountDownLatch {
    return createCountDownLatch(this.#ctx, checkName(name, 'name'));
  }

  /** `stripes` plain locks under `name`; `get(key)` maps any key onto one of them by a stable hash. */
  getStripedLock(name: string, stripes: number): StripedLock {
    return createStripedLock(this.#ctx, checkName(name, 'name'), stripes);
  }

  /**
   * The fair lock `name`: granted in request order across clients and processes. A waiter whose
   * process died is skipped after `fairWaiterTimeout`; an aborted waiter leaves the queue at once.
   */
  getFairLock(name: string): Lock {
    return createFairLock(this.#ctx, checkName(name, 'name'));
  }

  /**
   * The spin lock `name`: the re-entrant lock, but its waiters poll with exponential backoff and
   * jitter instead of listening on pub/sub.
   */
  getSpinLock(name: string, backoff?: SpinBackoff): Lock {
    return createSpinLock(this.#ctx, checkName(name, 'name'), resolveBackoff(backoff));
  }

  /** The fenced lock `name`: every new holder gets a strictly greater fencing token. */
  getFencedLock(name: string): FencedLock {
    return createFencedLock(this.#ctx, checkName(name, 'name'));
  }

  /** The counting semaphore `name`; its permits are not owned and may be released by anyone. */
  getSemaphore(name: string): Semaphore {
    return createSemaphore(this.#ctx, checkName(name, 'name'));
  }

  /** The semaphore `name` whose permits have ids and optional leases. */
  getPermitExpirableSemaphore(name: string): PermitExpirableSemaphore {
    return createPermitExpirableSemaphore(this.#ctx, checkName(name, 'name'));
  }

  /**
   * Runs `fn` as one owner: every lock taken inside it, on any handle of this client, re-enters
   * for that owner. A nested scope keeps the outer owner.
   */
  async scope<T>(fn: () => T | Promise<T>): Promise<T> {
    checkFunction(fn, 'fn');
    if (inScope()) return fn();
    return runInScope(newOwnerId(), async () => fn());
  }

  /**
   * Stops every renewal and subscription of this client, and fails its pending waits. Held locks
   * are not deleted: they expire after their lease. Idempotent.
   */
  shutdown(): Promise<void> {
    this.#shutdown ??= (async () => {
      const { watchdog, livenesses, waiters, connection } = this.#ctx;
      watchdog.stop();
      this.#ctx.loss.close();
      livenesses.abandonAll('the LockClient was shut down, so nothing renews it any more');
      // Every wait ends: parked, subscribing or sleeping.
      this.#closing.abort(new ShutDownError('This LockClient was shut down while waiting'));
      waiters.close();
      await connection.close();
    })();
    return this.#shutdown;
  }
}
