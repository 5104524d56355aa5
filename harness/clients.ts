/**
 * Redis clients of the deployments, ioredis and node-redis alike, with their errors swallowed
 * (a failover makes them noisy by design) and closed when the test file ends.
 */
import { Cluster, Redis, type RedisOptions } from 'ioredis';
import type { RedisClientType, RedisClusterType, RedisSentinelType } from 'redis';
import { atFileEnd } from './cleanup.js';

/** The node-redis client types the factories return (default modules, RESP2). */
export type NodeRedisClient = RedisClientType;
export type NodeRedisCluster = RedisClusterType;
export type NodeRedisSentinel = RedisSentinelType;

/** An ioredis client or Cluster, errors swallowed, closed after the file. */
export function trackIoredis<T extends Redis | Cluster>(client: T): T {
  client.on('error', () => undefined);
  atFileEnd(() => void client.disconnect());
  return client;
}

/** Connects a node-redis client, Cluster or Sentinel (errors swallowed, destroyed after the file). */
export async function connectNodeRedis<T extends NodeRedisClient | NodeRedisCluster | NodeRedisSentinel>(
  client: T,
): Promise<T> {
  client.on('error', () => undefined);
  atFileEnd(() => {
    if (client.isOpen) void client.destroy();
  });
  await client.connect();
  return client;
}

/**
 * A plain ioredis client to one server, with no Cluster or Sentinel routing (errors swallowed,
 * closed after the file): to see what one node holds, or to write to a demoted master.
 */
export function directClient(node: { readonly host: string; readonly port: number }, options?: RedisOptions): Redis {
  return trackIoredis(new Redis({ host: node.host, port: node.port, ...options }));
}
