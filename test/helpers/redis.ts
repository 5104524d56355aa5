import { after } from 'node:test';
import { Redis, type RedisOptions } from 'ioredis';
import { startRedisServer, type RedisProcess } from '../../src/cli/redis-server.js';
import { LockClient } from '../../src/index.js';
import type { LockClientOptions } from '../../src/options.js';

/**
 * Test servers and clients, all stopped when the test file ends. Every server is a private
 * redis-server on a free port: no test ever touches a Redis it did not start.
 */
export interface TestServer extends RedisProcess {
  /** A new ioredis client to this server (closed after the file). */
  client(options?: RedisOptions): Redis;
  /** A LockClient on a new ioredis client (shut down after the file). */
  lockClient(options?: LockClientOptions, redisOptions?: RedisOptions): LockClient;
}

const cleanups: (() => Promise<void>)[] = [];
after(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
});

export async function startServer(extraArgs: readonly string[] = []): Promise<TestServer> {
  const server = await startRedisServer(extraArgs);
  cleanups.push(() => server.stop(true));
  const client = (options?: RedisOptions): Redis => {
    const redis = new Redis({ port: server.port, host: server.host, lazyConnect: false, ...options });
    redis.on('error', () => undefined);
    cleanups.push(() => {
      redis.disconnect();
      return Promise.resolve();
    });
    return redis;
  };
  const lockClient = (options?: LockClientOptions, redisOptions?: RedisOptions): LockClient => {
    const locks = new LockClient(client(redisOptions), options);
    // Pushed after its client and server: cleanups run in reverse, so it shuts down before they go.
    cleanups.push(() => locks.shutdown());
    return locks;
  };
  return { ...server, client, lockClient };
}

/** Every key on `redis` with its TTL (ms; -1: none). */
export async function keysWithTtl(redis: Redis, pattern = '*'): Promise<Map<string, number>> {
  const keys = await redis.keys(pattern);
  const result = new Map<string, number>();
  for (const key of keys) result.set(key, await redis.pttl(key));
  return result;
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Count of calls of one command since the last CONFIG RESETSTAT, from INFO commandstats. */
export async function commandCalls(redis: Redis, command: string): Promise<number> {
  const info = await redis.info('commandstats');
  const match = new RegExp(`cmdstat_${command}:calls=(\\d+)`).exec(info);
  return match ? Number(match[1]) : 0;
}

/** Total command calls since the last CONFIG RESETSTAT, excluding the INFO calls that read it. */
export async function totalCalls(redis: Redis): Promise<number> {
  const info = await redis.info('commandstats');
  let total = 0;
  for (const match of info.matchAll(/cmdstat_(\w+):calls=(\d+)/g)) if (match[1] !== 'info') total += Number(match[2]);
  return total;
}

/** Polls `check` until it returns true, failing after `ms` (for state that settles asynchronously). */
export async function eventually(
  check: () => Promise<boolean> | boolean,
  ms = 2_000,
  what = 'condition',
): Promise<void> {
  const until = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`${what} did not hold within ${ms} ms`);
    await sleep(10);
  }
}
