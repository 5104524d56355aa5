import type { ClientContext } from '../context.js';
import type { LockBackend } from '../engine/lock-backend.js';
import { LockHandle } from '../engine/lock-handle.js';
import { readWriteLockKeys } from '../keys.js';
import type { Lock } from '../lock.js';
import type { TryLockOptions } from '../options.js';
import { currentScopeOwner, randomId, runAsOwner } from '../owner.js';
import {
  lockRenew,
  lockStatus,
  readWriteLockReadAcquire,
  readWriteLockReadForceUnlock,
  readWriteLockReadRelease,
  readWriteLockReadRenew,
  readWriteLockReadStatus,
  readWriteLockWriteAcquire,
  readWriteLockWriteForceUnlock,
  readWriteLockWriteRelease,
} from '../scripts/index.js';
import { toStatus } from './lock.js';

/**
 * A read-write lock (Redisson's RReadWriteLock): many readers at once, or one writer.
 *
 * - Both locks are re-entrant, and both are full {@link Lock}s (waiting, watchdog, leases, scope).
 * - The write holder may also take the read lock (downgrade); a reader cannot take the write lock
 *   (upgrade): the write lock waits while any read hold exists, the caller's own included.
 * - Every reader has its own lease: one reader leaving or expiring never shortens another's.
 * - `readLock()` and `writeLock()` of one `ReadWriteLock` act as one owner (like one Java thread);
 *   two `getReadWriteLock(name)` calls are two owners.
 */
export interface ReadWriteLock {
  /** The lock's name. */
  readonly name: string;
  /** The shared side: held by any number of readers while no other owner writes. */
  readLock(): Lock;
  /** The exclusive side: held by one owner while nobody else reads or writes. */
  writeLock(): Lock;
}

/** Where each side is kept and announced. */
interface RwKeys {
  /** Write hash: owner -> write holds, expiring with the write lease. */
  readonly write: string;
  /** Read hash: `n:<owner>` -> read holds, `t:<owner>` -> that reader's expiry (Redis clock). */
  readonly read: string;
  /** Waiting readers listen here (a freed write lock wakes them all). */
  readonly readChannel: string;
  /** Waiting writers listen here (a freed lock wakes one). */
  readonly writeChannel: string;
}

function rwKeys(ctx: ClientContext, name: string): RwKeys {
  return readWriteLockKeys(ctx.options.keyPrefix, name);
}

const acquireReply = (reply: unknown) =>
  reply === null ? ({ acquired: true, value: null } as const) : ({ acquired: false, retryIn: Number(reply) } as const);

function readBackend(ctx: ClientContext, name: string, k: RwKeys): LockBackend {
  const { run } = ctx;
  const both = [k.write, k.read];
  return {
    name,
    key: k.read,
    channel: k.readChannel,
    renewScript: readWriteLockReadRenew,
    async attempt(owner, leaseMs, deadline) {
      return acquireReply(await run(readWriteLockReadAcquire, both, [owner, leaseMs], deadline));
    },
    async release(owner) {
      return Number(await run(readWriteLockReadRelease, both, [owner, k.writeChannel, '0']));
    },
    async releaseAll(owner) {
      await run(readWriteLockReadRelease, both, [owner, k.writeChannel, '1']);
    },
    async forceUnlock() {
      return Number(await run(readWriteLockReadForceUnlock, both, [k.writeChannel])) === 1;
    },
    async status(owner) {
      return toStatus(await run(readWriteLockReadStatus, [k.read], [owner]));
    },
  };
}

function writeBackend(ctx: ClientContext, name: string, k: RwKeys): LockBackend {
  const { run } = ctx;
  const both = [k.write, k.read];
  return {
    name,
    key: k.write,
    channel: k.writeChannel,
    // The write hash has the plain lock's shape, so its renewals share the plain lock's batches.
    renewScript: lockRenew,
    async attempt(owner, leaseMs, deadline) {
      return acquireReply(await run(readWriteLockWriteAcquire, both, [owner, leaseMs], deadline));
    },
    async release(owner) {
      return Number(await run(readWriteLockWriteRelease, both, [owner, k.readChannel, k.writeChannel, '0']));
    },
    async releaseAll(owner) {
      await run(readWriteLockWriteRelease, both, [owner, k.readChannel, k.writeChannel, '1']);
    },
    async forceUnlock() {
      return Number(await run(readWriteLockWriteForceUnlock, both, [k.readChannel, k.writeChannel])) === 1;
    },
    async status(owner) {
      return toStatus(await run(lockStatus, [k.write], [owner]));
    },
  };
}

/**
 * A LockHandle whose owner id outside any scope is shared with its sibling side, so the writer
 * can downgrade through the other handle. `withLock` runs as that same id.
 */
class SideHandle extends LockHandle {
  constructor(
    ctx: ClientContext,
    backend: LockBackend,
    private readonly sharedOwner: string,
  ) {
    super(ctx, backend);
  }

  protected override currentOwner(): string {
    return `${this.ctx.clientId}:${currentScopeOwner() ?? this.sharedOwner}`;
  }

  override withLock<T>(fn: (signal: AbortSignal) => T | Promise<T>, options?: TryLockOptions): Promise<T> {
    if (currentScopeOwner() !== undefined) return super.withLock(fn, options);
    return runAsOwner(this.sharedOwner, () => super.withLock(fn, options));
  }
}

/** Creates the read-write lock returned by `LockClient.getReadWriteLock()`. */
export function createReadWriteLock(ctx: ClientContext, name: string): ReadWriteLock {
  const keys = rwKeys(ctx, name);
  const owner = randomId(12);
  const read = new SideHandle(ctx, readBackend(ctx, name, keys), owner);
  const write = new SideHandle(ctx, writeBackend(ctx, name, keys), owner);
  return {
    name,
    readLock: () => read,
    writeLock: () => write,
  };
}
