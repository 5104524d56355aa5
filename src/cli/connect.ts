/**
 * How the CLI connects: Redis URLs, Sentinels, finding a Cluster from any node, and clients that
 * fail fast instead of retrying.
 */
import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';
import { CliError, EXIT } from './exit.js';

/** Where the CLI connects: a Redis URL (standalone or any Cluster node), or Sentinels. */
export interface Target {
  readonly url?: string | undefined;
  /** `host:port[,host:port...]` of Sentinels; `name` is the monitored master's. */
  readonly sentinels?: string | undefined;
  readonly name?: string | undefined;
  /** Bound on connecting and on every command, in ms. */
  readonly timeout: number;
}

/** A connected client and the nodes behind it. */
export interface Connection {
  /** The client to hand to LockClient (routes by slot on a Cluster). */
  readonly client: Redis | Cluster;
  readonly mode: 'standalone' | 'cluster' | 'sentinel';
  /** host:port, never the password. */
  readonly address: string;
  /** Where the keys live: every Cluster primary, else the one server. */
  primaries(): Redis[];
  /** Every node: classic pub/sub subscribers may sit on any of them. */
  allNodes(): Redis[];
  /** For long-running commands: reconnect and retry from now on instead of failing fast. */
  keepAlive(): void;
  close(): void;
}

type Endpoint = Pick<RedisOptions, 'host' | 'port' | 'username' | 'password' | 'db' | 'tls'>;

/** Parses `redis://[user:password@]host[:port][/db]` (or `rediss://` for TLS); CliError when it is not one. */
export function parseRedisUrl(text: string): Endpoint {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new CliError(`"${text}" is not a URL; expected redis://host:port`, EXIT.badUrl);
  }
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:')
    throw new CliError(`"${url.protocol}" is not a Redis URL scheme; expected redis:// or rediss://`, EXIT.badUrl);
  if (!url.hostname) throw new CliError(`"${text}" names no host; expected redis://host:port`, EXIT.badUrl);
  const db = url.pathname.replace(/^\//, '');
  if (db !== '' && !/^\d+$/.test(db)) throw new CliError(`"/${db}" is not a database number`, EXIT.badUrl);
  return {
    host: url.hostname.replace(/^\[(.*)\]$/, '$1'),
    port: url.port ? Number(url.port) : 6379,
    ...(url.username ? { username: decodeURIComponent(url.username) } : {}),
    ...(url.password ? { password: decodeURIComponent(url.password) } : {}),
    ...(db ? { db: Number(db) } : {}),
    ...(url.protocol === 'rediss:' ? { tls: {} } : {}),
  };
}

function parseSentinels(text: string): { host: string; port: number }[] {
  return text.split(',').map((entry) => {
    const match = /^\[?([^\]]+?)\]?:(\d{1,5})$/.exec(entry.trim());
    if (!match) throw new CliError(`"${entry}" is not a Sentinel address; expected host:port`, EXIT.badUrl);
    return { host: match[1]!, port: Number(match[2]) };
  });
}

/**
 * A closed connection's socket is destroyed at once when the server does not close its side (a
 * server that never answers), instead of ioredis' default 2 s that would keep the CLI alive.
 */
const DISCONNECT_MS = 50;

/** Fail fast: no reconnects, no retries, no offline queue, every command bounded. */
function failFast(timeout: number): RedisOptions {
  return {
    lazyConnect: true,
    connectTimeout: timeout,
    commandTimeout: timeout,
    disconnectTimeout: DISCONNECT_MS,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    enableOfflineQueue: false,
  };
}

/** What ioredis says when the bytes it reads are not the Redis protocol (an HTTP server, a database). */
const NOT_RESP = /Protocol error|Unknown RESP type|Please report this/i;

function unreachable(address: string, error: unknown): CliError {
  const reason = error instanceof Error ? error.message : String(error);
  if (NOT_RESP.test(reason)) {
    return new CliError(
      `${address} is not a Redis server: it answered something other than the Redis protocol (check the host and port)`,
      EXIT.unreachable,
    );
  }
  return new CliError(`cannot reach Redis at ${address}: ${reason}`, EXIT.unreachable);
}

/**
 * Awaits `connecting` for at most `ms` (the whole of `--timeout`: the TCP connect, ioredis' ready
 * check and the first command together, not one bound each); on failure or timeout disconnects and
 * throws a CliError with the socket's own reason (ECONNREFUSED, ETIMEDOUT, WRONGPASS...), not
 * ioredis' "Connection is closed" that follows it.
 */
async function bounded(client: Redis | Cluster, connecting: Promise<unknown>, ms: number, address: string) {
  let cause: unknown;
  const remember = (error: unknown): void => void (cause ??= error);
  client.on('error', remember);
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  try {
    await Promise.race([connecting, timeout]);
  } catch (error) {
    client.disconnect();
    throw unreachable(address, cause ?? error);
  } finally {
    clearTimeout(timer);
    client.off('error', remember);
  }
}

/** Connects with a bounded timeout; a Cluster node's URL gives a Cluster client. */
export async function connect(target: Target): Promise<Connection> {
  const { timeout } = target;
  if (target.sentinels !== undefined) {
    if (!target.name) throw new CliError('--sentinel needs --name, the name of the monitored master', EXIT.usage);
    const sentinels = parseSentinels(target.sentinels);
    const redis = new Redis({
      ...failFast(timeout),
      sentinels,
      name: target.name,
      sentinelRetryStrategy: () => null,
      // latchkey refuses a Sentinel client without it (see the README's Deployments).
      failoverDetector: true,
    });
    redis.on('error', () => undefined); // reported by connect() below, once
    const address = `${target.name} via Sentinel ${target.sentinels}`;
    await bounded(redis, redis.connect(), timeout, address);
    return single(redis, 'sentinel', address);
  }
  if (!target.url) throw new CliError('give the Redis to use with --url redis://host:port or REDIS_URL', EXIT.usage);
  const endpoint = parseRedisUrl(target.url);
  const address = `${endpoint.host}:${endpoint.port}`;
  const redis = new Redis({ ...failFast(timeout), ...endpoint });
  redis.on('error', () => undefined);
  let info = '';
  await bounded(
    redis,
    redis.connect().then(async () => (info = await redis.info('cluster'))),
    timeout,
    address,
  );
  if (!/cluster_enabled:1/.test(info)) return single(redis, 'standalone', address);
  redis.disconnect();
  const { host, port, ...auth } = endpoint;
  const options: ClusterOptions = {
    lazyConnect: true,
    // The Cluster client decides retries and queueing for its nodes: only bounds go to them.
    redisOptions: {
      connectTimeout: timeout,
      commandTimeout: timeout,
      disconnectTimeout: DISCONNECT_MS,
      maxRetriesPerRequest: 0,
      ...auth,
    },
    clusterRetryStrategy: () => null,
    enableOfflineQueue: false,
    slotsRefreshTimeout: timeout,
  };
  const cluster = new Cluster([{ host: host!, port: port! }], options);
  cluster.on('error', () => undefined);
  await bounded(cluster, cluster.connect(), timeout, address);
  return {
    client: cluster,
    mode: 'cluster',
    address,
    primaries: () => cluster.nodes('master'),
    allNodes: () => cluster.nodes('all'),
    keepAlive() {
      cluster.options.clusterRetryStrategy = (times) => Math.min(times * 200, 2_000);
      cluster.options.enableOfflineQueue = true;
    },
    close: () => cluster.disconnect(),
  };
}

function single(redis: Redis, mode: 'standalone' | 'sentinel', address: string): Connection {
  return {
    client: redis,
    mode,
    address,
    primaries: () => [redis],
    allNodes: () => [redis],
    keepAlive() {
      Object.assign(redis.options, {
        retryStrategy: (times: number) => Math.min(times * 200, 2_000),
        sentinelRetryStrategy: (times: number) => Math.min(times * 200, 2_000),
        maxRetriesPerRequest: 20,
        enableOfflineQueue: true,
        commandTimeout: undefined,
      });
    },
    close: () => redis.disconnect(),
  };
}
