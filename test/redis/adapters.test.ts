import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { Cluster, Redis } from 'ioredis';
import { createClient, createCluster, createSentinel } from 'redis';
import { LockClient, RedisUnavailableError } from '../../src/index.js';
import type { LuaScript, RedisConnection } from '../../src/redis/connection.js';
import { IoredisConnection } from '../../src/redis/ioredis-adapter.js';
import { NodeRedisConnection } from '../../src/redis/node-redis-adapter.js';
import { toConnection } from '../../src/redis/to-connection.js';
import { lockStatus } from '../../src/scripts/index.js';
import { startCluster, type TestCluster } from '../../harness/cluster.js';
import { startSentinel, type TestSentinel } from '../../harness/sentinel.js';
import { eventually, sleep } from '../../harness/eventually.js';
import { startServer, type TestServer } from '../../harness/server.js';

const listener = (message: (text: string) => void) => ({ message, reconnected: () => undefined });

let server: TestServer;
let cluster: TestCluster;
let sentinel: TestSentinel;
const nodeRedisClients: { close(): Promise<unknown> }[] = [];
const admins: (Redis | Cluster)[] = [];
before(async () => {
  [server, cluster, sentinel] = await Promise.all([startServer(), startCluster(), startSentinel()]);
});
/** Closes the clients made so far: at the end of each suite, before the servers stop after the file. */
async function closeClients(): Promise<void> {
  for (const client of nodeRedisClients.splice(0)) await client.close().catch(() => undefined);
  for (const admin of admins.splice(0)) admin.disconnect();
}

async function nodeRedis(port = server.port) {
  const client = createClient({ url: `redis://127.0.0.1:${port}`, socket: { reconnectStrategy: false } });
  client.on('error', () => undefined);
  await client.connect();
  nodeRedisClients.push(client);
  return client;
}

/** One adapter on one deployment, with a plain client of the deployment to look from. */
interface AdapterCase {
  readonly name: string;
  readonly deployment: 'standalone' | 'cluster' | 'sentinel';
  make: () => Promise<{ connection: RedisConnection; client: object }>;
  /** A plain ioredis client of the deployment (a Cluster client routes by key). */
  admin: () => Redis | Cluster;
  /** Subscribers of a sharded channel, on whichever node serves it. */
  subscribers: (channel: string) => Promise<number>;
}

const shardSubscribers = async (nodes: readonly Redis[], channel: string): Promise<number> => {
  const counts = await Promise.all(
    nodes.map((node) => node.pubsub('SHARDNUMSUB', channel) as Promise<[string, number]>),
  );
  return counts.reduce((sum, [, count]) => sum + Number(count), 0);
};
const plain = (node: { host: string; port: number }): Redis => {
  const redis = new Redis({ host: node.host, port: node.port });
  redis.on('error', () => undefined);
  admins.push(redis);
  return redis;
};
const standaloneOf = (target: () => { host: string; port: number }) => ({
  admin: () => plain(target()),
  subscribers: (channel: string) => shardSubscribers([plain(target())], channel),
});
const onCluster = {
  admin: () => {
    const admin = cluster.client();
    admins.push(admin);
    return admin;
  },
  subscribers: (channel: string) => shardSubscribers(cluster.nodes.map(plain), channel),
};

const adapters: AdapterCase[] = [
  {
    name: 'ioredis',
    deployment: 'standalone',
    ...standaloneOf(() => server),
    make: () => {
      const client = server.client();
      return Promise.resolve({ connection: new IoredisConnection(client), client });
    },
  },
  {
    name: 'node-redis',
    deployment: 'standalone',
    ...standaloneOf(() => server),
    make: async () => {
      const client = await nodeRedis();
      return { connection: new NodeRedisConnection(client), client };
    },
  },
  {
    name: 'ioredis',
    deployment: 'cluster',
    ...onCluster,
    make: () => {
      const client = cluster.client();
      return Promise.resolve({ connection: new IoredisConnection(client), client });
    },
  },
  {
    name: 'node-redis',
    deployment: 'cluster',
    ...onCluster,
    make: async () => {
      const client = createCluster({ rootNodes: cluster.nodes.map((node) => ({ url: node.url })) });
      client.on('error', () => undefined);
      await client.connect();
      nodeRedisClients.push(client);
      return { connection: new NodeRedisConnection(client), client };
    },
  },
  {
    name: 'ioredis',
    deployment: 'sentinel',
    ...standaloneOf(() => sentinel.primary),
    make: () => {
      const client = sentinel.client();
      return Promise.resolve({ connection: new IoredisConnection(client), client });
    },
  },
  {
    name: 'node-redis',
    deployment: 'sentinel',
    ...standaloneOf(() => sentinel.primary),
    make: async () => {
      const { host, port } = sentinel.sentinel;
      const client = createSentinel({ name: sentinel.name, sentinelRootNodes: [{ host, port }] });
      client.on('error', () => undefined);
      await client.connect();
      nodeRedisClients.push(client);
      return { connection: new NodeRedisConnection(client), client };
    },
  },
];

async function readsProcessed(admin: { info(section: string): Promise<string> }): Promise<number> {
  return Number(/total_reads_processed:(\d+)/.exec(await admin.info('stats'))?.[1]);
}

/** A script as the generated index describes one: its name, source and SHA-1. */
function testScript(name: string, source: string): LuaScript {
  return { name, sha: createHash('sha1').update(source).digest('hex'), source };
}

const probe = testScript('test/probe', "return {1, 'two', {3}, redis.call('hget', KEYS[1], 'f')}");

for (const { name, deployment, make, admin, subscribers } of adapters) {
  describe(`adapter conformance: ${name} on ${deployment}`, () => {
    after(closeClients);
    it('is picked automatically from the client', async () => {
      const { client } = await make();
      const connection = toConnection(client);
      assert.equal(connection.constructor.name, name === 'ioredis' ? 'IoredisConnection' : 'NodeRedisConnection');
      await connection.close();
    });

    it('runs scripts: integers, strings, nested arrays and nil replies', async () => {
      const { connection } = await make();
      assert.deepEqual(await connection.evalScript(probe, ['adapter:none'], []), [1, 'two', [3], null]);
      assert.deepEqual(await connection.evalScript(lockStatus, ['latchkey:{none}:lock'], ['owner']), [0, 0, -2]);
      await connection.close();
    });

    if (deployment === 'standalone')
      it('sends the scripts of one tick in a few socket writes, each answered with its own reply', async () => {
        const { connection } = await make();
        const echo = testScript('test/echo', 'return ARGV[1]');
        await connection.evalScript(echo, [], ['warm-up']); // loads the script (NOSCRIPT, then EVAL)
        const plainAdmin = server.client();
        const readsBefore = await readsProcessed(plainAdmin);
        const replies = await Promise.all(
          Array.from({ length: 64 }, (_, i) => connection.evalScript(echo, [], [`reply ${i}`])),
        );
        // Two INFO calls of the admin client count as reads too.
        const reads = (await readsProcessed(plainAdmin)) - readsBefore - 1;
        assert.deepEqual(
          replies,
          Array.from({ length: 64 }, (_, i) => `reply ${i}`),
        );
        assert.ok(reads <= 8, `64 scripts took ${reads} reads of the server`);
        await connection.close();
      });

    it("passes Redis' own reply errors through unchanged", async () => {
      const { connection } = await make();
      await admin().set('adapter:string', 'x');
      const error = await connection.evalScript(lockStatus, ['adapter:string'], ['owner']).catch((e: unknown) => e);
      assert.ok(error instanceof Error && /WRONGTYPE/.test(error.message), String(error));
      assert.ok(!(error instanceof RedisUnavailableError));
      await connection.close();
    });

    it('subscribes (sharded), delivers messages to every listener of a channel, unsubscribes after the last', async () => {
      const { connection } = await make();
      const channel = `adapter:${name}:{ch}`;
      const got: string[] = [];
      const offA = await connection.subscribe(
        channel,
        listener((m) => got.push(`a:${m}`)),
      );
      const offB = await connection.subscribe(
        channel,
        listener((m) => got.push(`b:${m}`)),
      );
      // Waits listen with sharded pub/sub (the scripts SPUBLISH).
      await admin().spublish(channel, '1');
      await eventually(() => got.length === 2, 2_000, 'both listeners heard it');
      assert.deepEqual(got.sort(), ['a:1', 'b:1']);
      await offA();
      assert.equal(await subscribers(channel), 1);
      await offB();
      await eventually(async () => (await subscribers(channel)) === 0, 2_000, 'unsubscribed');
      await connection.close();
    });

    it('locks exclude each other across adapters, and waiters are woken through it', async () => {
      const { client } = await make();
      const { client: another } = await adapters
        .find((other) => other.deployment === deployment && other.name !== name)!
        .make();
      const mine = new LockClient(client as never);
      const other = new LockClient(another as never);
      const name_ = `cross-adapter:${deployment}`;
      const lock = mine.getLock(name_);
      await lock.lock();
      assert.equal(await other.getLock(name_).tryLock(), false);
      const waiting = other.getLock(name_).tryLock({ waitTime: 5_000 });
      await sleep(100);
      await lock.unlock();
      assert.equal(await waiting, true);
      await other.getLock(name_).forceUnlock();
      await mine.shutdown();
      await other.shutdown();
    });
  });
}

describe('adapter conformance: unreachable server', () => {
  it('node-redis: a dead server gives RedisUnavailableError', async () => {
    const doomed = await startServer();
    const client = await nodeRedis(doomed.port);
    const locks = new LockClient(client, { commandTimeout: 1_000 });
    await doomed.stop(true);
    await assert.rejects(locks.getLock('x').lock(), RedisUnavailableError);
    await locks.shutdown();
  });
});
