/**
 * Conformance cases per client library, on the deployments a test file started: each library
 * (and version, through npm aliases) is handed to the same suite (`conformance.ts`).
 */
import { Redis } from 'ioredis';
import type { RedisConnection } from '../../src/redis/connection.js';
import { toConnection } from '../../src/redis/to-connection.js';
import type { TestCluster } from '../../harness/cluster.js';
import type { TestSentinel } from '../../harness/sentinel.js';
import type { TestServer } from '../../harness/server.js';
import { readsProcessed, shardSubscribers, type AdapterCase } from './conformance.js';

/** The deployments a test file started (filled in by its `before`). */
export interface Deployments {
  server?: TestServer;
  cluster?: TestCluster;
  sentinel?: TestSentinel;
}

type Deployment = AdapterCase['deployment'];
type Address = { readonly host: string; readonly port: number };
type Closable = { close?(): unknown; disconnect?(): unknown };

/** Plain ioredis connections to look at a deployment from, closed with the case. */
function lookers(admins: Redis[]) {
  const plain = (node: Address): Redis => {
    const redis = new Redis({ host: node.host, port: node.port });
    redis.on('error', () => undefined);
    admins.push(redis);
    return redis;
  };
  return plain;
}

/**
 * A case of `name` on `deployment`: `connect()` makes a connected client of the library; the
 * adapter is the one `toConnection()` picks.
 */
export function clientCase(
  name: string,
  deployment: Deployment,
  adapter: string,
  deployments: Deployments,
  connect: () => Promise<object>,
): AdapterCase {
  const clients: Closable[] = [];
  const admins: Redis[] = [];
  const plain = lookers(admins);
  const need = <T>(value: T | undefined, what: string): T => {
    if (value === undefined) throw new Error(`this test file started no ${what}`);
    return value;
  };
  const standaloneTarget = (): Address =>
    deployment === 'sentinel' ? need(deployments.sentinel, 'Sentinel').primary : need(deployments.server, 'server');
  const onCluster = deployment === 'cluster';
  return {
    name,
    deployment,
    adapter,
    async make(): Promise<{ connection: RedisConnection; client: object }> {
      const client = await connect();
      clients.push(client);
      return { connection: toConnection(client), client };
    },
    admin() {
      if (!onCluster) return plain(standaloneTarget());
      const admin = need(deployments.cluster, 'Cluster').client();
      return admin;
    },
    subscribers: (channel) =>
      shardSubscribers(
        onCluster ? need(deployments.cluster, 'Cluster').nodes.map(plain) : [plain(standaloneTarget())],
        channel,
      ),
    readsProcessed: deployment === 'standalone' ? () => readsProcessed(plain(standaloneTarget())) : undefined,
    async close() {
      for (const client of clients.splice(0)) await closeClient(client);
      for (const admin of admins.splice(0)) admin.disconnect();
    },
  };
}

/**
 * Closes a client of any library: node-redis 5+ `close()`, node-redis 4 `disconnect()` (a promise),
 * ioredis `disconnect()`, GLIDE and Bun `close()`.
 */
async function closeClient(client: Closable): Promise<void> {
  try {
    await (typeof client.close === 'function' ? client.close() : client.disconnect?.());
  } catch {
    // already closed
  }
}

/** The part of an ioredis-compatible library (ioredis 5 and 6, iovalkey) the cases use. */
export interface IoredisLibrary {
  Redis: new (options: object) => object & { on(event: 'error', listener: () => void): unknown };
  Cluster: new (nodes: Address[], options?: object) => object & { on(event: 'error', listener: () => void): unknown };
}

/** Cases of an ioredis-compatible library on standalone, Cluster and Sentinel. */
export function ioredisCases(
  name: string,
  library: IoredisLibrary,
  deployments: Deployments,
  on: readonly Deployment[] = ['standalone', 'cluster', 'sentinel'],
  options: object = {},
): AdapterCase[] {
  const quiet = <T extends { on(event: 'error', listener: () => void): unknown }>(client: T): T => {
    client.on('error', () => undefined);
    return client;
  };
  const connect: Record<Deployment, () => object> = {
    standalone: () => {
      const { host, port } = deployments.server!;
      return quiet(new library.Redis({ host, port, ...options }));
    },
    cluster: () =>
      quiet(
        new library.Cluster(
          deployments.cluster!.nodes.map(({ host, port }) => ({ host, port })),
          { redisOptions: options },
        ),
      ),
    sentinel: () => {
      const { sentinel, name: master } = deployments.sentinel!;
      return quiet(
        new library.Redis({
          sentinels: [{ host: sentinel.host, port: sentinel.port }],
          name: master,
          failoverDetector: true,
          ...options,
        }),
      );
    },
  };
  return on.map((deployment) =>
    clientCase(name, deployment, 'IoredisConnection', deployments, () => Promise.resolve(connect[deployment]())),
  );
}

/** The part of a node-redis library (v4, v5, v6) the cases use. */
export interface NodeRedisLibrary {
  createClient(options: object): NodeRedisConnectable;
  createCluster(options: object): NodeRedisConnectable;
  createSentinel?(options: object): NodeRedisConnectable;
}
interface NodeRedisConnectable {
  on(event: 'error', listener: () => void): unknown;
  connect(): Promise<unknown>;
}

/**
 * Cases of a node-redis library. Each client is connected the v4 way (`connect()` then the client
 * itself), which v5 accepts too: v4's `connect()` resolves undefined.
 */
export function nodeRedisCases(
  name: string,
  library: NodeRedisLibrary,
  deployments: Deployments,
  on: readonly Deployment[] = ['standalone', 'cluster', 'sentinel'],
  options: object = {},
): AdapterCase[] {
  const connected = async (client: NodeRedisConnectable): Promise<object> => {
    client.on('error', () => undefined);
    await client.connect();
    return client;
  };
  const connect: Record<Deployment, () => Promise<object>> = {
    standalone: () =>
      connected(
        library.createClient({
          url: deployments.server!.url,
          socket: { reconnectStrategy: false },
          ...options,
        }),
      ),
    cluster: () =>
      connected(
        library.createCluster({
          rootNodes: deployments.cluster!.nodes.map((node) => ({ url: node.url })),
          defaults: options,
        }),
      ),
    sentinel: () => {
      const { sentinel, name: master } = deployments.sentinel!;
      if (!library.createSentinel) throw new Error(`${name} has no createSentinel()`);
      return connected(
        library.createSentinel({
          name: master,
          sentinelRootNodes: [{ host: sentinel.host, port: sentinel.port }],
          ...options,
        }),
      );
    },
  };
  return on.map((deployment) => clientCase(name, deployment, 'NodeRedisConnection', deployments, connect[deployment]));
}
