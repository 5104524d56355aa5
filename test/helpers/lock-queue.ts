import type { Redis } from 'ioredis';
import { until } from './fixture-process.js';

/** Reading a lock's waiter queue in Redis (`<prefix>{name}:lock:queue` / `lock-waiters`), for the fairness tests. */
export function lockQueue(redis: () => Redis) {
  const queueKey = (name: string): string => `latchkey:{${name}}:lock:queue`;
  const waitersKey = (name: string): string => `latchkey:{${name}}:lock:waiters`;
  const queued = (name: string): Promise<number> => redis().llen(queueKey(name));
  /** Resolves once `length` owners are queued for `name`. */
  const waitQueued = (name: string, length: number, timeoutMs?: number): Promise<void> =>
    until(async () => (await queued(name)) === length, timeoutMs);
  return { queueKey, waitersKey, queued, waitQueued };
}
