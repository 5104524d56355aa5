/** Picks the adapter for the client handed to `new LockClient()`, or says clearly why none fits. */
import { BunRedisConnection, defaultBunClient, isBunRedis, type BunRedisLike } from './bun-adapter.js';
import type { RedisConnection } from './connection.js';
import { GlideConnection, isGlide, type GlideLike } from './glide-adapter.js';
import { IoredisConnection, isIoredis, type IoredisLike } from './ioredis-adapter.js';
import { isNodeRedis, NodeRedisConnection, type NodeRedisLike } from './node-redis-adapter.js';
import type { NodeRedisClusterLike } from './node-redis-cluster.js';
import type { NodeRedisSentinelLike } from './node-redis-sentinel.js';

/**
 * Any client LockClient accepts: ioredis `Redis` (standalone or Sentinel) or `Cluster` (and iovalkey's),
 * a node-redis v4+ client, `createCluster()` or `createSentinel()`, a Valkey GLIDE `GlideClient` or
 * `GlideClusterClient`, `Bun.redis`, or a `RedisConnection` (your own, or `bunRedisConnection()`'s).
 * The client types are described by the few members latchkey uses, so that no client library is
 * imported; they are not part of the API.
 */
export type RedisClientLike =
  | IoredisLike
  | NodeRedisLike
  | NodeRedisClusterLike
  | NodeRedisSentinelLike
  | GlideLike
  | BunRedisLike
  | RedisConnection;

/** What `new LockClient()` accepts, for the error that names it. */
const SUPPORTED =
  'an ioredis (5.11+, 6) or iovalkey Redis or Cluster, a connected node-redis (4, 5, 6) client, createCluster() or ' +
  'createSentinel(), a Valkey GLIDE GlideClient or GlideClusterClient, Bun.redis or bunRedisConnection(new RedisClient(url), url), ' +
  'or a RedisConnection of your own';

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

/** What a value is, for an error message: its type, or its class. */
function describeValue(value: unknown): string {
  if (value === null || value === undefined) return String(value);
  if (typeof value === 'function') return `a function (${value.name || 'anonymous'})`;
  if (typeof value !== 'object') return `a ${typeof value} (${JSON.stringify(value)?.slice(0, 40)})`;
  if (typeof (value as { then?: unknown }).then === 'function') return 'a Promise (await it first)';
  const name = value.constructor?.name;
  return name && name !== 'Object' ? `an instance of ${name}` : 'a plain object';
}

/**
 * An ioredis-compatible Cluster must be able to subscribe to sharded channels on every primary
 * (ioredis 5.11+ `shardedSubscribers`); iovalkey 0.4 subscribes on one node only, where a lock's
 * channel usually does not live.
 */
function refuseUnshardedCluster(client: IoredisLike): void {
  const cluster = client as IoredisLike & { createShardedSubscriberGroup?: unknown };
  if (cluster.isCluster === true && typeof cluster.createShardedSubscriberGroup !== 'function') {
    throw new TypeError(
      `Expected \`redis\`, an ioredis-compatible Cluster (${describeValue(client)}), to support sharded subscribers ` +
        '(ioredis 5.11 or later): this one subscribes on a single node, so waiters on locks of other nodes would never hear a release. ' +
        'Use an ioredis Cluster, or a node-redis or Valkey GLIDE Cluster client.',
    );
  }
}

/** Picks the adapter for `redis`; a TypeError names the argument when it is no client we know. */
export function toConnection(redis: unknown): RedisConnection {
  if (isConnection(redis)) return redis;
  // Before ioredis: Bun's client has evalsha() and duplicate() too.
  if (isBunRedis(redis)) {
    const bun = defaultBunClient();
    if (bun?.client === redis) return new BunRedisConnection(redis, bun.url);
    throw new TypeError(
      "Expected `redis`, a Bun RedisClient, to come with its URL: latchkey opens its pub/sub connection there, and Bun's client does not tell it. " +
        'Use new LockClient(bunRedisConnection(client, url)).',
    );
  }
  if (isIoredis(redis)) {
    refuseUnshardedCluster(redis);
    return new IoredisConnection(redis);
  }
  if (isNodeRedis(redis)) return new NodeRedisConnection(redis);
  if (isGlide(redis)) return new GlideConnection(redis);
  const hint =
    redis === undefined
      ? ' (node-redis 4: `await client.connect()` resolves undefined; connect the client, then pass the client itself)'
      : '';
  throw new TypeError(`Expected \`redis\` to be ${SUPPORTED}; got ${describeValue(redis)}${hint}`);
}
