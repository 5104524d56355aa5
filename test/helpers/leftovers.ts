import assert from 'node:assert/strict';
import type { Redis } from 'ioredis';

/**
 * Asserts that no latchkey key on `redis` lives without a TTL, except the data a primitive must
 * keep (matched by `allowed`: semaphore permits, latch counts, fencing counters).
 */
export async function assertNoKeyWithoutTtl(
  redis: Redis,
  allowed: readonly RegExp[] = [],
  prefix = 'latchkey:',
): Promise<void> {
  const stray: string[] = [];
  for (const key of await redis.keys(`${prefix}*`)) {
    if ((await redis.pttl(key)) === -1 && !allowed.some((pattern) => pattern.test(key))) stray.push(key);
  }
  assert.deepEqual(stray, [], 'latchkey keys left without a TTL');
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
