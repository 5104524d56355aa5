import type { RedisConnection } from './connection.js';
import { IoredisConnection, isIoredis, type IoredisLike } from './ioredis-adapter.js';
import { isNodeRedis, NodeRedisConnection, type NodeRedisLike } from './node-redis-adapter.js';

/** Any client LockClient accepts: ioredis `Redis`/`Cluster`, node-redis v4+, or a `RedisConnection` of your own. */
export type RedisClientLike = IoredisLike | NodeRedisLike | RedisConnection;

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
    'Expected `redis` to be an ioredis Redis or Cluster client, a node-redis client, or a RedisConnection',
  );
}
