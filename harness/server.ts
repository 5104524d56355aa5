/**
 * A private standalone redis-server per test, with its ioredis clients and LockClients, all stopped
 * when the test file ends; and the server's command counters. No test ever touches a Redis it did
 * not start.
 */
import { Redis, type RedisOptions } from 'ioredis';
import { LockClient } from '../src/index.js';
import type { LockClientOptions } from '../src/options.js';
import { atFileEnd } from './cleanup.js';
import { startRedisServer, type RedisProcess } from './redis-process.js';

export interface TestServer extends RedisProcess {
  /** A new ioredis client to this server (closed after the file). */
  client(options?: RedisOptions): Redis;
  /** A LockClient on a new ioredis client (shut down after the file). */
  lockClient(options?: LockClientOptions, redisOptions?: RedisOptions): LockClient;
}

export async function startServer(extraArgs: readonly string[] = []): Promise<TestServer> {
  const server = await startRedisServer(extraArgs);
  atFileEnd(() => server.stop(true));
  const client = (options?: RedisOptions): Redis => {
    const redis = new Redis({ port: server.port, host: server.host, lazyConnect: false, ...options });
    redis.on('error', () => undefined);
    atFileEnd(() => redis.disconnect());
    return redis;
  };
  const lockClient = (options?: LockClientOptions, redisOptions?: RedisOptions): LockClient => {
    const locks = new LockClient(client(redisOptions), options);
    // Registered after its client and server: cleanups run newest first, so it shuts down before they go.
    atFileEnd(() => locks.shutdown());
    return locks;
  };
  return { ...server, client, lockClient };
}

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
