import type { ClientContext } from '../context.js';
import type { LockBackend, LockStatus } from '../engine/lock-handle.js';
import { LockHandle } from '../engine/lock-handle.js';
import { primitiveKeys } from '../keys.js';
import { lockAcquire, lockForceUnlock, lockRelease, lockReleaseAll, lockRenew, lockStatus } from '../scripts/index.js';

/**
 * The re-entrant lock (Redisson's RLock): one hash per lock, field = owner, value = hold count,
 * expiring with the lease. The last release deletes it and announces it on the lock's channel.
 */
export function reentrantBackend(ctx: ClientContext, name: string): LockBackend {
  const keys = primitiveKeys(ctx.options.keyPrefix, name);
  const key = keys.key('lock');
  const channel = keys.channel;
  const { run } = ctx;
  return {
    name,
    key,
    channel,
    renewScript: lockRenew,
    async attempt(owner, leaseMs, deadline) {
      const ttl = await run(lockAcquire, [key], [owner, leaseMs], deadline);
      return ttl === null ? { acquired: true, value: null } : { acquired: false, retryIn: Number(ttl) };
    },
    async release(owner) {
      return Number(await run(lockRelease, [key], [owner, channel]));
    },
    async releaseAll(owner) {
      await run(lockReleaseAll, [key], [owner, channel]);
    },
    async forceUnlock() {
      return Number(await run(lockForceUnlock, [key], [channel])) === 1;
    },
    async status(owner) {
      return toStatus(await run(lockStatus, [key], [owner]));
    },
  };
}

/** Reads the `{ exists, holds, ttl }` reply of a status script. */
export function toStatus(reply: unknown): LockStatus {
  const [exists, holds, ttl] = (reply as number[]).map(Number);
  return { locked: exists === 1, holds: holds ?? 0, ttl: ttl ?? -2 };
}

/** Creates the plain re-entrant lock returned by `LockClient.getLock()`. */
export function createLock(ctx: ClientContext, name: string): LockHandle {
  return new LockHandle(ctx, reentrantBackend(ctx, name));
}
