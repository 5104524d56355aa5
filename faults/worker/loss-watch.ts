/**
 * Checks each loss latchkey announces against Redis, to count false alarms.
 */
import diagnosticsChannel from 'node:diagnostics_channel';
import type { Redis } from 'ioredis';
import type { RunnerLink } from './link.js';

interface LostMessage {
  readonly key?: unknown;
  readonly owner?: unknown;
  readonly reason?: unknown;
}

/**
 * Verifies each loss latchkey announces (diagnostics channel `latchkey:lock:lost`): asks Redis at
 * once, on a connection of its own that no fault touches, whether the owner is still listed on the
 * key with time to live. If so, the signal fired while the lock was verifiably held: a false
 * alarm, unless a fault explains it (the checker decides). "Time to live" is more than
 * `marginMs`, so that a lease ending a moment before Redis expires its key is not taken for one.
 */
export function watchLosses(direct: Redis, link: RunnerLink, marginMs: number): () => void {
  const channel = diagnosticsChannel.channel('latchkey:lock:lost');
  const onLost = (message: unknown): void => {
    const { key, owner, reason } = (message ?? {}) as LostMessage;
    if (typeof key !== 'string' || typeof owner !== 'string') return;
    void stillHeld(direct, key, owner, marginMs).then(
      (ttl) => {
        if (ttl !== undefined) link.event({ kind: 'still-held', key, owner, reason: String(reason), ttl });
      },
      () => undefined, // Redis unreachable: nothing verified
    );
  };
  channel.subscribe(onLost);
  return () => channel.unsubscribe(onLost);
}

/** The key's PTTL when `owner` is still listed on it with more than `marginMs` to live; else undefined. */
async function stillHeld(redis: Redis, key: string, owner: string, marginMs: number): Promise<number | undefined> {
  // Lock hashes list owners as fields; a read-write lock's read hash as "n:<owner>".
  const [plain, reader, ttl] = await Promise.all([
    redis.hexists(key, owner),
    redis.hexists(key, `n:${owner}`),
    redis.pttl(key),
  ]);
  return (plain === 1 || reader === 1) && (ttl === -1 || ttl > marginMs) ? ttl : undefined;
}
