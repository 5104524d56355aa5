/**
 * ReadWriteLock (getReadWriteLock): a shared read lock and an exclusive write lock, both full Locks.
 */
import { now } from '../clock.js';
import type { ClientContext } from '../context.js';
import type { Attempt } from '../engine/acquire.js';
import { KeyLock } from '../engine/key-lock.js';
import type { Grant, LockBackend } from '../engine/lock-core.js';
import { LockHandle } from '../engine/lock-handle.js';
import { provenUntil } from '../engine/liveness.js';
import { readWriteLockKeys } from '../keys.js';
import type { Lock } from '../lock.js';
import { newOwnerId } from '../owner.js';
import { runUntilKnown } from '../redis/script-runner.js';
import {
  lockCheck,
  lockReenter,
  lockRenew,
  lockStatus,
  readWriteLockReadAcquire,
  readWriteLockReadCheck,
  readWriteLockReadForceUnlock,
  readWriteLockReadRelease,
  readWriteLockReadRenew,
  readWriteLockReadStatus,
  readWriteLockWriteAcquire,
  readWriteLockWriteForceUnlock,
  readWriteLockWriteRelease,
} from '../scripts/index.js';
import { toStatus } from './reentrant-lock.js';

/**
 * A read-write lock (Redisson's RReadWriteLock): many readers at once, or one writer.
 *
 * - Both locks are re-entrant, and both are full {@link Lock}s (waiting, watchdog, leases, scope).
 * - Inside the write lock's `withLock()` callback (or a `scope()`), the read lock is taken as the
 *   same owner (downgrade); a reader cannot take the write lock (no upgrade): the write lock waits
 *   while any read hold exists, the caller's own included.
 * - Every reader has its own lease: one reader leaving or expiring never shortens another's.
 */
export interface ReadWriteLock {
  /** The lock's name. */
  readonly name: string;
  /** The shared side: held by any number of readers while no other owner writes. */
  readLock(): Lock;
  /** The exclusive side: held by one owner while nobody else reads or writes. */
  writeLock(): Lock;
}

type RwKeys = ReturnType<typeof readWriteLockKeys>;

/** The outcome of an acquire script: nil when taken, else ms until worth trying again. */
function attemptReply(reply: unknown, sentAt: number, leaseMs: number): Attempt<Grant> {
  if (reply !== null) return { acquired: false, retryIn: Number(reply) };
  const validUntil = provenUntil(sentAt, leaseMs);
  return validUntil > now()
    ? { acquired: true, value: { since: sentAt, validUntil } }
    : { acquired: false, retryIn: 0 };
}

/** What both sides share: a fresh acquisition that waits on `channel` and gives up with `leave`. */
function side(
  ctx: ClientContext,
  k: RwKeys,
  which: 'read' | 'write',
  name: string,
): Pick<LockBackend, 'name' | 'kind' | 'identity' | 'forceUnlock'> {
  const { commandTimeout } = ctx.options;
  return {
    name,
    kind: which === 'read' ? 'read-lock' : 'write-lock',
    // Both sides are one lock for re-entry: the writer's callback reads as the writer.
    identity: `${ctx.clientId}|${k.write}`,
    async forceUnlock() {
      const marker = k.released(which, `force:${newOwnerId()}`);
      const until = now() + commandTimeout;
      const reply =
        which === 'read'
          ? await runUntilKnown(
              ctx.run,
              readWriteLockReadForceUnlock,
              [k.write, k.read, marker],
              [k.writeChannel, 2 * commandTimeout],
              until,
            )
          : await runUntilKnown(
              ctx.run,
              readWriteLockWriteForceUnlock,
              [k.write, k.read, marker],
              [k.readChannel, k.writeChannel, 2 * commandTimeout],
              until,
            );
      return Number(reply) === 1;
    },
  };
}

/** The hold id an abandoned acquisition releases under: it had no hold, so no later release matches it. */
const GIVEN_UP = 'given-up';

function readBackend(ctx: ClientContext, name: string, k: RwKeys): LockBackend {
  const { run } = ctx;
  const both = [k.write, k.read];
  const release = (owner: string, holdId: string, holds: number | 'all', until: number): Promise<number> => {
    const keep = Math.max(0, until - now()) + ctx.options.commandTimeout;
    const keys = [...both, k.released('read', owner)];
    const args = [owner, k.writeChannel, holds, keep, holdId];
    return runUntilKnown(run, readWriteLockReadRelease, keys, args, until).then(Number);
  };
  return {
    ...side(ctx, k, 'read', name),
    key: k.read,
    renewScript: readWriteLockReadRenew,
    checkScript: readWriteLockReadCheck,
    begin(owner, leaseMs) {
      return {
        name,
        kind: 'read-lock',
        grantKey: k.read,
        channel: k.readChannel,
        async attempt(deadline) {
          const sentAt = now();
          return attemptReply(
            await run(readWriteLockReadAcquire, both, [owner, leaseMs, 0], deadline),
            sentAt,
            leaseMs,
          );
        },
        async giveUp() {
          await release(owner, GIVEN_UP, 'all', now() + ctx.options.commandTimeout);
        },
      };
    },
    async reenter(owner, holds, leaseMs, until) {
      const sentAt = now();
      const reply = await runUntilKnown(run, readWriteLockReadAcquire, both, [owner, leaseMs, holds], until);
      return reply === null ? { since: sentAt, validUntil: provenUntil(sentAt, leaseMs) } : null;
    },
    release,
    async status(owner) {
      return toStatus(await run(readWriteLockReadStatus, [k.read], [owner]));
    },
  };
}

function writeBackend(ctx: ClientContext, name: string, k: RwKeys): LockBackend {
  const { run } = ctx;
  const both = [k.write, k.read];
  const release = (owner: string, holdId: string, holds: number | 'all', until: number): Promise<number> => {
    const keep = Math.max(0, until - now()) + ctx.options.commandTimeout;
    const keys = [...both, k.released('write', owner)];
    const args = [owner, k.readChannel, k.writeChannel, holds, keep, holdId];
    return runUntilKnown(run, readWriteLockWriteRelease, keys, args, until).then(Number);
  };
  return {
    ...side(ctx, k, 'write', name),
    key: k.write,
    // The write hash has the plain lock's shape: its renewals share the plain lock's batches.
    renewScript: lockRenew,
    checkScript: lockCheck,
    begin(owner, leaseMs) {
      return {
        name,
        kind: 'write-lock',
        grantKey: k.write,
        channel: k.writeChannel,
        async attempt(deadline) {
          const sentAt = now();
          return attemptReply(await run(readWriteLockWriteAcquire, both, [owner, leaseMs], deadline), sentAt, leaseMs);
        },
        async giveUp() {
          await release(owner, GIVEN_UP, 'all', now() + ctx.options.commandTimeout);
        },
      };
    },
    async reenter(owner, holds, leaseMs, until) {
      const sentAt = now();
      const reply = await runUntilKnown(run, lockReenter, [k.write], [owner, holds, leaseMs], until);
      return reply === null ? null : { since: sentAt, validUntil: provenUntil(sentAt, leaseMs) };
    },
    release,
    async status(owner) {
      return toStatus(await run(lockStatus, [k.write], [owner]));
    },
  };
}

/** Creates the read-write lock returned by `LockClient.getReadWriteLock()`. */
export function createReadWriteLock(ctx: ClientContext, name: string): ReadWriteLock {
  const keys = readWriteLockKeys(ctx.options.keyPrefix, name);
  const read = new LockHandle(new KeyLock(ctx, readBackend(ctx, name, keys)));
  const write = new LockHandle(new KeyLock(ctx, writeBackend(ctx, name, keys)));
  return { name, readLock: () => read, writeLock: () => write };
}
