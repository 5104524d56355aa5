import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { createClient } from 'redis';
import { LockClient, RedisUnavailableError } from '../../src/index.js';
import type { LuaScript, RedisConnection } from '../../src/redis/connection.js';
import { IoredisConnection } from '../../src/redis/ioredis-adapter.js';
import { NodeRedisConnection } from '../../src/redis/node-redis-adapter.js';
import { toConnection } from '../../src/redis/to-connection.js';
import { lockStatus } from '../../src/scripts/index.js';
import { eventually, sleep, startServer, type TestServer } from '../helpers/redis.js';

const listener = (message: (text: string) => void) => ({ message, reconnected: () => undefined });

let server: TestServer;
const nodeRedisClients: { quit(): Promise<unknown> }[] = [];
before(async () => {
  server = await startServer();
});
after(async () => {
  for (const client of nodeRedisClients) await client.quit().catch(() => undefined);
});

async function nodeRedis(port = server.port) {
  const client = createClient({ url: `redis://127.0.0.1:${port}`, socket: { reconnectStrategy: false } });
  client.on('error', () => undefined);
  await client.connect();
  nodeRedisClients.push(client);
  return client;
}

const adapters: [string, () => Promise<{ connection: RedisConnection; client: object }>][] = [
  [
    'ioredis',
    () => {
      const client = server.client();
      return Promise.resolve({ connection: new IoredisConnection(client), client });
    },
  ],
  [
    'node-redis',
    async () => {
      const client = await nodeRedis();
      return { connection: new NodeRedisConnection(client), client };
    },
  ],
];

async function readsProcessed(admin: { info(section: string): Promise<string> }): Promise<number> {
  return Number(/total_reads_processed:(\d+)/.exec(await admin.info('stats'))?.[1]);
}

/** A script as the generated index describes one: its name, source and SHA-1. */
function testScript(name: string, source: string): LuaScript {
  return { name, sha: createHash('sha1').update(source).digest('hex'), source };
}

const probe = testScript('test/probe', "return {1, 'two', {3}, redis.call('hget', KEYS[1], 'f')}");

for (const [name, make] of adapters) {
  describe(`adapter conformance: ${name}`, () => {
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

    it('sends the scripts of one tick in a few socket writes, each answered with its own reply', async () => {
      const { connection } = await make();
      const echo = testScript('test/echo', 'return ARGV[1]');
      await connection.evalScript(echo, [], ['warm-up']); // loads the script (NOSCRIPT, then EVAL)
      const admin = server.client();
      const readsBefore = await readsProcessed(admin);
      const replies = await Promise.all(
        Array.from({ length: 64 }, (_, i) => connection.evalScript(echo, [], [`reply ${i}`])),
      );
      // Two INFO calls of the admin client count as reads too.
      const reads = (await readsProcessed(admin)) - readsBefore - 1;
      assert.deepEqual(
        replies,
        Array.from({ length: 64 }, (_, i) => `reply ${i}`),
      );
      assert.ok(reads <= 8, `64 scripts took ${reads} reads of the server`);
      await connection.close();
    });

    it("passes Redis' own reply errors through unchanged", async () => {
      const { connection } = await make();
      await server.client().set('adapter:string', 'x');
      const error = await connection.evalScript(lockStatus, ['adapter:string'], ['owner']).catch((e: unknown) => e);
      assert.ok(error instanceof Error && /WRONGTYPE/.test(error.message));
      assert.ok(!(error instanceof RedisUnavailableError));
      await connection.close();
    });

    it('subscribes, delivers messages to every listener of a channel, unsubscribes after the last', async () => {
      const { connection } = await make();
      const got: string[] = [];
      const offA = await connection.subscribe(
        'adapter:ch',
        listener((m) => got.push(`a:${m}`)),
      );
      const offB = await connection.subscribe(
        'adapter:ch',
        listener((m) => got.push(`b:${m}`)),
      );
      const admin = server.client();
      // Waits listen with sharded pub/sub (the scripts SPUBLISH).
      await admin.spublish('adapter:ch', '1');
      await sleep(50);
      assert.deepEqual(got.sort(), ['a:1', 'b:1']);
      await offA();
      assert.deepEqual(await admin.pubsub('SHARDNUMSUB', 'adapter:ch'), ['adapter:ch', 1]);
      await offB();
      const numsub = async (): Promise<unknown> => admin.pubsub('SHARDNUMSUB', 'adapter:ch');
      await eventually(async () => JSON.stringify(await numsub()) === '["adapter:ch",0]', 2_000, 'unsubscribed');
      await connection.close();
    });

    it('locks exclude each other across adapters, and waiters are woken through it', async () => {
      const { client } = await make();
      const mine = new LockClient(client as never);
      const other = new LockClient(name === 'ioredis' ? await nodeRedis() : server.client());
      const lock = mine.getLock('cross-adapter');
      await lock.lock();
      assert.equal(await other.getLock('cross-adapter').tryLock(), false);
      const waiting = other.getLock('cross-adapter').tryLock({ waitTime: 5_000 });
      await sleep(100);
      await lock.unlock();
      assert.equal(await waiting, true);
      await other.getLock('cross-adapter').forceUnlock();
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
