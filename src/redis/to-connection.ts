/**
 * Picks the adapter for the client given to LockClient (ioredis, node-redis, or a RedisConnection).
 */
import type { RedisConnection } from './connection.js';
import { IoredisConnection, isIoredis, type IoredisLike } from './ioredis-adapter.js';
import { isNodeRedis, NodeRedisConnection, type NodeRedisLike } from './node-redis-adapter.js';
import type { NodeRedisClusterLike } from './node-redis-cluster.js';
import type { NodeRedisSentinelLike } from './node-redis-sentinel.js';

/**
 * Any client LockClient accepts: ioredis `Redis` (standalone or Sentinel) or `Cluster`, a node-redis
 * v4+ client, `createCluster()` or `createSentinel()`, or a `RedisConnection` of your own. The
 * client types are described by the few members latchkey uses, so that neither client library is
 * imported; they are not part of the API.
 */
export type RedisClientLike =
  IoredisLike | NodeRedisLike | NodeRedisClusterLike | NodeRedisSentinelLike | RedisConnection;

function isConnection(value: unknown): value is RedisConnection {
  const candidate = value as Partial<RedisConnection> | null;
  return (
    typeof candidate === 'object' &&
    candidate !== null &&
    typeof candidate.evalScript === 'function' &&
    typeof candidate.subscribe === 'function' &&
    typeof candidate.batchGroup === 'function'
  );
}

/** Picks the adapter for `redis`; a TypeError names the argument when it is no client we know. */
export function toConnection(redis: unknown): RedisConnection {
  if (isConnection(redis)) return redis;
  if (isIoredis(redis)) return new IoredisConnection(redis);
  if (isNodeRedis(redis)) return new NodeRedisConnection(redis);
  throw new TypeError(
    'Expected `redis` to be an ioredis Redis or Cluster client, a node-redis client, Cluster or Sentinel, or a RedisConnection',
  );
}
