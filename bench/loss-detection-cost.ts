/**
 * What loss detection by push costs and buys, against renewal alone: connections per client,
 * Redis memory per client and per held key, and the time from a held lock's deletion to its
 * signal aborting. Figures for docs/loss-detection.md; run alone on a quiet machine:
 *
 *   node --import tsx bench/loss-detection-cost.ts [--locks 10000] [--clients 50] [--deletions 50]
 *
 * It starts a private redis-server (REDIS_SERVER_BIN or PATH) and prints one JSON object.
 */
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { Redis as Redis6 } from 'ioredis6';
import { createClient } from 'redis';
import { startRedisServer, type RedisProcess } from '../harness/redis-process.js';
import { LockClient, type LockClientOptions } from '../src/index.js';
import type { RedisClientLike } from '../src/redis/to-connection.js';
import { percentile } from './stats.js';

const { values } = parseArgs({
  options: {
    locks: { type: 'string', default: '10000' },
    clients: { type: 'string', default: '50' },
    deletions: { type: 'string', default: '50' },
  },
});
const LOCKS = Number(values.locks);
const CLIENTS = Number(values.clients);
const DELETIONS = Number(values.deletions);
/** Longer than the 50 ms after which a hold is first read on the tracking connection. */
const TRACKED_AFTER_MS = 200;

type Mode = NonNullable<LockClientOptions['lossDetection']>;
type ClientKind = 'ioredis 5' | 'ioredis 6 (RESP3)' | 'node-redis RESP2' | 'node-redis RESP3';

interface Made {
  redis: RedisClientLike;
  close: () => Promise<unknown>;
}

async function makeClient(kind: ClientKind, server: RedisProcess): Promise<Made> {
  if (kind.startsWith('ioredis')) {
    const redis = kind === 'ioredis 5' ? new Redis(server.port) : new Redis6(server.port);
    redis.on('error', () => undefined);
    return { redis, close: () => Promise.resolve(redis.disconnect()) };
  }
  const client = createClient({ url: server.url, RESP: kind === 'node-redis RESP3' ? 3 : 2 });
  client.on('error', () => undefined);
  await client.connect();
  return { redis: client as unknown as RedisClientLike, close: () => client.close() };
}

async function info(admin: Redis, section: string, field: string): Promise<number> {
  const match = new RegExp(`^${field}:(\\d+)`, 'm').exec(await admin.info(section));
  return Number(match?.[1]);
}

/** Connections a client opens: its own, holding one lock, then after waiting for a busy one. */
async function connections(admin: Redis, server: RedisProcess, kind: ClientKind, mode: Mode) {
  const count = (): Promise<number> => info(admin, 'clients', 'connected_clients');
  const base = await count();
  const made = await makeClient(kind, server);
  const locks = new LockClient(made.redis, { lossDetection: mode });
  locks.on('warning', () => undefined);
  await locks.getLock('held').lock();
  await sleep(TRACKED_AFTER_MS);
  const holding = (await count()) - base;
  // Another owner of the same client waits for it: the subscriber for waits opens.
  await locks.getLock('held').tryLock({ waitTime: 50 });
  const waited = (await count()) - base;
  await locks.shutdown();
  await admin.del('latchkey:{held}:lock');
  await made.close();
  await sleep(100);
  // The user's own connection included.
  return { holdingOneLock: holding, afterAWait: waited };
}

/** Redis memory per client (each holding one lock), and of each kind of connection. */
async function memoryPerClient(admin: Redis, server: RedisProcess, mode: Mode) {
  await sleep(200);
  const before = await info(admin, 'memory', 'used_memory');
  const made = await Promise.all(Array.from({ length: CLIENTS }, () => makeClient('ioredis 5', server)));
  const clients = made.map(({ redis }) => new LockClient(redis, { lossDetection: mode }));
  await Promise.all(clients.map((locks, i) => locks.getLock(`client-${i}`).lock()));
  await sleep(TRACKED_AFTER_MS);
  const after = await info(admin, 'memory', 'used_memory');
  const list = String(await admin.call('CLIENT', 'LIST')).split('\n');
  const totMem = (name: string): number | undefined => {
    const line = list.find((entry) => entry.includes(` name=${name}`));
    return line === undefined ? undefined : Number(/tot-mem=(\d+)/.exec(line)?.[1]);
  };
  await Promise.all(clients.map((locks) => locks.shutdown()));
  await Promise.all(made.map(({ close }) => close()));
  await admin.flushall();
  return {
    bytesPerClient: Math.round((after - before) / CLIENTS),
    trackingReaderTotMem: totMem('latchkey-tracking-'),
    invalidationSinkTotMem: totMem('latchkey-invalidations-'),
  };
}

/** Redis memory per held lock, with the tracking table's keys. */
async function memoryPerLock(admin: Redis, server: RedisProcess, mode: Mode) {
  const made = await makeClient('ioredis 5', server);
  const locks = new LockClient(made.redis, { lossDetection: mode });
  await locks.getLock('warm-up').lock();
  await sleep(TRACKED_AFTER_MS);
  const before = await info(admin, 'memory', 'used_memory');
  const handles = Array.from({ length: LOCKS }, (_, i) => locks.getLock(`many-${i}`));
  for (let i = 0; i < LOCKS; i += 1_000) await Promise.all(handles.slice(i, i + 1_000).map((lock) => lock.lock()));
  await sleep(TRACKED_AFTER_MS * 2);
  const after = await info(admin, 'memory', 'used_memory');
  const trackedKeys = await info(admin, 'stats', 'tracking_total_keys');
  await locks.shutdown();
  await made.close();
  await admin.flushall();
  return { bytesPerLock: Math.round((after - before) / LOCKS), trackedKeys };
}

/** From a held lock's DEL being sent to its signal aborting, over `DELETIONS` locks, one at a time. */
async function detection(admin: Redis, server: RedisProcess, kind: ClientKind) {
  const made = await makeClient(kind, server);
  const locks = new LockClient(made.redis);
  const times: number[] = [];
  for (let i = 0; i < DELETIONS; i++) {
    const { signal } = await locks.getLock(`deleted-${i}`).acquire();
    await sleep(TRACKED_AFTER_MS);
    const aborted = new Promise<number>((resolve) =>
      signal.addEventListener('abort', () => resolve(performance.now()), { once: true }),
    );
    const sent = performance.now();
    await admin.del(`latchkey:{deleted-${i}}:lock`);
    times.push((await aborted) - sent);
  }
  await locks.shutdown();
  await made.close();
  return summary(times);
}

/**
 * The same by renewal alone, at the default watchdogTimeout: one client per lock (a client renews
 * its holds in shared rounds), the locks taken over 10 s (a renewal period), so that their
 * renewals fall at every phase, then deleted at once.
 */
async function detectionByRenewal(admin: Redis, server: RedisProcess) {
  const made = await Promise.all(Array.from({ length: DELETIONS }, () => makeClient('ioredis 5', server)));
  const clients = made.map(({ redis }) => new LockClient(redis, { lossDetection: 'renewal' }));
  const signals: AbortSignal[] = [];
  for (const [i, locks] of clients.entries()) {
    signals.push((await locks.getLock(`renewed-${i}`).acquire()).signal);
    await sleep(10_000 / DELETIONS);
  }
  const sent = performance.now();
  await admin.del(...signals.map((_, i) => `latchkey:{renewed-${i}}:lock`));
  const times = await Promise.all(
    signals.map(
      (signal) =>
        new Promise<number>((resolve) =>
          signal.addEventListener('abort', () => resolve(performance.now() - sent), { once: true }),
        ),
    ),
  );
  await Promise.all(clients.map((locks) => locks.shutdown()));
  await Promise.all(made.map(({ close }) => close()));
  return summary(times);
}

function summary(times: number[]) {
  const sorted = [...times].sort((a, b) => a - b);
  const round = (ms: number): number => Math.round(ms * 100) / 100;
  return { n: times.length, p50: round(percentile(sorted, 50)), max: round(sorted.at(-1)!) };
}

const server = await startRedisServer();
const admin = new Redis(server.port);
try {
  const kinds: ClientKind[] = ['ioredis 5', 'ioredis 6 (RESP3)', 'node-redis RESP2', 'node-redis RESP3'];
  const result = {
    redis: (await admin.info('server')).match(/redis_version:(\S+)/)?.[1],
    connections: {
      push: await connections(admin, server, 'ioredis 5', 'push'),
      renewal: await connections(admin, server, 'ioredis 5', 'renewal'),
    },
    memoryPerClient: {
      push: await memoryPerClient(admin, server, 'push'),
      renewal: await memoryPerClient(admin, server, 'renewal'),
    },
    memoryPerLock: {
      push: await memoryPerLock(admin, server, 'push'),
      renewal: await memoryPerLock(admin, server, 'renewal'),
    },
    detectionMs: {} as Record<string, ReturnType<typeof summary>>,
  };
  for (const kind of kinds) result.detectionMs[`push, ${kind}`] = await detection(admin, server, kind);
  result.detectionMs['renewal (watchdogTimeout 30 s)'] = await detectionByRenewal(admin, server);
  console.log(JSON.stringify(result, null, 2));
} finally {
  admin.disconnect();
  await server.stop();
}
