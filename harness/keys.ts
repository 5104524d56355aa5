/**
 * Reading latchkey's keys in a Redis the harness started: what is left behind (keys without a TTL,
 * a primitive's leftovers), TTLs, and a lock's waiter queue. Imports no node:test: the fault
 * runner's stray-key check uses keysWithoutTtl too.
 */
import assert from 'node:assert/strict';
import type { Redis } from 'ioredis';
import { eventually } from './eventually.js';

/** Every key matching `pattern`, by SCAN (no KEYS on a server with many keys). */
async function scanKeys(redis: Redis, pattern: string): Promise<string[]> {
  const keys = new Set<string>();
  let cursor = '0';
  do {
    const [next, batch] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1_000);
    cursor = next;
    for (const key of batch) keys.add(key);
  } while (cursor !== '0');
  return [...keys];
}

/** Every key on `redis` with its TTL (ms; -1: none). */
export async function keysWithTtl(redis: Redis, pattern = '*'): Promise<Map<string, number>> {
  const keys = await redis.keys(pattern);
  const result = new Map<string, number>();
  for (const key of keys) result.set(key, await redis.pttl(key));
  return result;
}

/** The keys under `prefix` that live without a TTL, apart from those `allowed` matches. */
export async function keysWithoutTtl(
  redis: Redis,
  allowed: readonly RegExp[] = [],
  prefix = 'latchkey:',
): Promise<string[]> {
  const stray: string[] = [];
  for (const key of await scanKeys(redis, `${prefix}*`)) {
    if (allowed.some((pattern) => pattern.test(key))) continue;
    if ((await redis.pttl(key)) === -1) stray.push(key);
  }
  return stray.sort();
}

/**
 * Asserts that no latchkey key on `redis` lives without a TTL, except the data a primitive must
 * keep (matched by `allowed`: semaphore permits, latch counts, fencing counters).
 */
export async function assertNoKeyWithoutTtl(
  redis: Redis,
  allowed: readonly RegExp[] = [],
  prefix = 'latchkey:',
): Promise<void> {
  assert.deepEqual(await keysWithoutTtl(redis, allowed, prefix), [], 'latchkey keys left without a TTL');
}

/**
 * The keys of primitive `name` left on `redis`, apart from the short-lived markers that make a
 * repeated call harmless (`...:released:<owner>`, `...:op:<id>`), which must expire by themselves.
 */
export async function keysLeft(redis: Redis, name: string, prefix = 'latchkey:'): Promise<string[]> {
  const left: string[] = [];
  for (const key of await redis.keys(`${prefix}{${name}}:*`)) {
    if (!/:(released|op):/.test(key)) left.push(key);
    else assert.ok((await redis.pttl(key)) > 0, `marker ${key} has a TTL`);
  }
  return left.sort();
}

/** Reading a lock's waiter queue in Redis (`<prefix>{name}:lock:queue` / `lock-waiters`), for the fairness tests. */
export function lockQueue(redis: () => Redis) {
  const queueKey = (name: string): string => `latchkey:{${name}}:lock:queue`;
  const waitersKey = (name: string): string => `latchkey:{${name}}:lock:waiters`;
  const queued = (name: string): Promise<number> => redis().llen(queueKey(name));
  /** Resolves once `length` owners are queued for `name`. */
  const waitQueued = async (name: string, length: number, timeoutMs = 10_000): Promise<void> => {
    await eventually(async () => (await queued(name)) === length, timeoutMs, `${length} queued for ${name}`);
  };
  return { queueKey, waitersKey, queued, waitQueued };
}
