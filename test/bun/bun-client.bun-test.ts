/**
 * The conformance suite on Bun's own Redis client (run by `npm run test:bun`, under Bun: `bun`
 * exists only there), against ioredis 5 for mutual exclusion.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { after, before, describe, it } from 'node:test';
import { RedisClient } from 'bun';
import * as ioredis from 'ioredis';
import { bunRedisConnection, LockClient } from '../../src/index.js';
import { startServer } from '../../harness/server.js';
import { clientCase, ioredisCases, type Deployments } from '../redis/client-cases.js';
import { describeConformance } from '../redis/conformance.js';

const deployments: Deployments = {};
before(async () => {
  deployments.server = await startServer();
});

/** A Bun client and the connection latchkey makes of it (its URL given, as Bun does not tell it). */
const bunCase = clientCase('Bun RedisClient', 'standalone', 'BunRedisConnection', deployments, async () => {
  const client = new RedisClient(deployments.server!.url);
  await client.connect();
  return bunRedisConnection(client, deployments.server!.url);
});
// The case's client is the connection: closing it closes latchkey's subscriber, not Bun's client.
const reference = ioredisCases('ioredis 5', ioredis, deployments, ['standalone']);
after(async () => {
  for (const peer of reference) await peer.close();
});
describeConformance([bunCase], () => reference[0]);

describe('Bun RedisClient: a lost subscriber connection', () => {
  it('is made again, its channels subscribed again, and its waiters told to look again', async () => {
    const url = deployments.server!.url;
    const connection = bunRedisConnection(new RedisClient(url), url);
    const heard: string[] = [];
    let reconnects = 0;
    await connection.subscribe('bun:{again}', { message: (text) => heard.push(text), reconnected: () => reconnects++ });
    const admin = deployments.server!.client();
    await admin.call('CLIENT', 'KILL', 'TYPE', 'pubsub');
    const deadline = Date.now() + 5_000;
    while (reconnects === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(reconnects, 1);
    await admin.spublish('bun:{again}', 'after');
    while (heard.length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    assert.deepEqual(heard, ['after']);
    await connection.close();
  });

  it('Bun.redis is taken as it is, its URL from REDIS_URL as Bun read it at start', async () => {
    // A process of its own: Bun.redis reads REDIS_URL once, when the process starts.
    const child = spawn(process.execPath, ['test/fixtures/bun-default-client.ts'], {
      env: { ...process.env, REDIS_URL: deployments.server!.url },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const [code] = (await once(child, 'exit')) as [number | null];
    assert.equal(code, 0, output);
    const { acquired, wokenAfterMs } = JSON.parse(output) as { acquired: boolean; wokenAfterMs: number };
    assert.equal(acquired, true);
    assert.ok(wokenAfterMs < 1_000, `woken by the release through the subscriber, not a timeout: ${wokenAfterMs} ms`);
  });

  it('hand-over between two Bun clients is woken by the release', async () => {
    const url = deployments.server!.url;
    const [a, b] = [new RedisClient(url), new RedisClient(url)];
    const first = new LockClient(bunRedisConnection(a, url));
    const second = new LockClient(bunRedisConnection(b, url));
    const lock = first.getLock('bun:hand-over');
    await lock.lock();
    const waiting = second.getLock('bun:hand-over').tryLock({ waitTime: 5_000 });
    await new Promise((resolve) => setTimeout(resolve, 50));
    const released = Date.now();
    await lock.unlock();
    assert.equal(await waiting, true);
    assert.ok(Date.now() - released < 1_000, 'woken by the release, not by a timeout');
    await first.shutdown();
    await second.shutdown();
    a.close();
    b.close();
  });
});
