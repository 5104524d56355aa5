import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { Redis as Redis6 } from 'ioredis6';
import { createClient } from 'redis';
import { LockClient, type LatchkeyWarning } from '../../src/index.js';
import type { RedisClientLike } from '../../src/redis/to-connection.js';
import { startServer, type TestServer } from '../../harness/server.js';
import { eventually, sleep } from '../../harness/eventually.js';

/**
 * Loss detection by push with every client and protocol latchkey supports: a client speaking
 * RESP3 (ioredis 6 by default, node-redis with `RESP: 3`) must detect a deleted lock as fast as
 * one speaking RESP2. Bounds as in loss-detection.test.ts: they prove the push (renewal would
 * take 10 s at the default watchdogTimeout), not its speed.
 */
const PUSHED_MS = 1_000;
const TRACKED_AFTER_MS = 200;

let server: TestServer;
let admin: Redis;
before(async () => {
  server = await startServer();
  admin = server.client();
});

/** Resolves once `signal` aborts, or rejects after `ms`. */
function abortedWithin(signal: AbortSignal, ms: number): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(() => reject(new Error(`signal not aborted within ${ms} ms`)), ms);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/** latchkey's tracking connections of the tag's pair: their ids, and where the reader's tracking points. */
async function trackingPair(tag: string): Promise<{ reader?: string; redirect?: string; sink?: string }> {
  const lines = String(await admin.call('CLIENT', 'LIST')).split('\n');
  const field = (line: string | undefined, name: string): string | undefined =>
    line === undefined ? undefined : new RegExp(`(?:^| )${name}=(\\S*)`).exec(line)?.[1];
  const reader = lines.find((line) => line.includes(` name=latchkey-tracking-${tag} `));
  const sink = lines.find((line) => line.includes(` name=latchkey-invalidations-${tag} `));
  return { reader: field(reader, 'id'), redirect: field(reader, 'redir'), sink: field(sink, 'id') };
}

/** The tags of every tracking pair now connected. */
async function trackingTags(): Promise<string[]> {
  const list = String(await admin.call('CLIENT', 'LIST'));
  return [...list.matchAll(/ name=latchkey-tracking-(\S+)/g)].map((match) => match[1]!);
}

type Made = { redis: RedisClientLike; close: () => Promise<unknown> };

const clients: [string, () => Promise<Made>][] = [
  ['ioredis 5', () => Promise.resolve(ioredis(new Redis(server.port, server.host)))],
  ['ioredis 6 (RESP3, its default)', () => Promise.resolve(ioredis(new Redis6(server.port, server.host)))],
  ['ioredis 6 with protocol: 2', () => Promise.resolve(ioredis(new Redis6(server.port, server.host, { protocol: 2 })))],
  ['node-redis (RESP2)', () => nodeRedis({})],
  ['node-redis with RESP: 3', () => nodeRedis({ RESP: 3 })],
  ['node-redis with RESP: 3 and a client-side cache', () => nodeRedis({ RESP: 3, clientSideCache: { ttl: 0 } })],
];

function ioredis(redis: Redis | Redis6): Made {
  redis.on('error', () => undefined);
  return {
    redis,
    close: () => {
      redis.disconnect();
      return Promise.resolve();
    },
  };
}

async function nodeRedis(options: object): Promise<Made> {
  const client = createClient({ url: server.url, ...options });
  client.on('error', () => undefined);
  await client.connect();
  return { redis: client as unknown as RedisClientLike, close: () => client.close() };
}

describe('loss detection by push with every client and protocol', () => {
  for (const [label, make] of clients) {
    it(`${label}: a deleted lock's signal aborts at once, with no warning`, async () => {
      const { redis, close } = await make();
      const locks = new LockClient(redis);
      const warnings: LatchkeyWarning[] = [];
      locks.on('warning', (warning) => warnings.push(warning));
      after(async () => {
        await locks.shutdown();
        await close();
      });
      const name = `deleted-${label.replace(/\W/g, '')}`;
      const { signal } = await locks.getLock(name).acquire();
      await sleep(TRACKED_AFTER_MS);
      assert.equal(await admin.del(`latchkey:{${name}}:lock`), 1);
      await abortedWithin(signal, PUSHED_MS);
      assert.deepEqual(warnings, []);
    });

    it(`${label}: tracks again after both tracking connections were killed`, async () => {
      const before = await trackingTags();
      const { redis, close } = await make();
      const locks = new LockClient(redis);
      after(async () => {
        await locks.shutdown();
        await close();
      });
      const name = `killed-${label.replace(/\W/g, '')}`;
      const { signal } = await locks.getLock(name).acquire();
      await sleep(TRACKED_AFTER_MS);
      const [tag] = (await trackingTags()).filter((found) => !before.includes(found));
      assert.ok(tag, 'a tracking pair was opened');
      const first = await trackingPair(tag);
      assert.equal(first.redirect, first.sink);
      await admin.call('CLIENT', 'KILL', 'ID', first.sink!);
      await admin.call('CLIENT', 'KILL', 'ID', first.reader!);
      // Both are back, on new sockets, and the reader's tracking points at the new sink.
      await eventually(
        async () => {
          const pair = await trackingPair(tag);
          const fresh = pair.reader !== first.reader && pair.sink !== first.sink;
          return fresh && pair.sink !== undefined && pair.redirect === pair.sink;
        },
        5_000,
        'tracking pointed at the new sink',
      );
      await sleep(TRACKED_AFTER_MS);
      assert.equal(signal.aborted, false);
      await admin.del(`latchkey:{${name}}:lock`);
      await abortedWithin(signal, PUSHED_MS);
    });
  }
});
