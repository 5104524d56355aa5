import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import * as ioredis from 'ioredis';
import * as redis from 'redis';
import { LockClient, RedisUnavailableError } from '../../src/index.js';
import { startCluster } from '../../harness/cluster.js';
import { startSentinel } from '../../harness/sentinel.js';
import { startServer } from '../../harness/server.js';
import { ioredisCases, nodeRedisCases, type Deployments } from './client-cases.js';
import { describeConformance } from './conformance.js';

// The adapter conformance suite on the clients latchkey is written against: ioredis 5 and
// node-redis 5, on a single server, a Cluster and Sentinel. Other versions and clients:
// client-versions.test.ts, glide.test.ts, and bun/ under Bun.
const deployments: Deployments = {};
before(async () => {
  [deployments.server, deployments.cluster, deployments.sentinel] = await Promise.all([
    startServer(),
    startCluster(),
    startSentinel(),
  ]);
});

describeConformance([
  ...ioredisCases('ioredis 5', ioredis, deployments),
  ...nodeRedisCases('node-redis 5', redis, deployments),
]);

describe('adapter conformance: unreachable server', () => {
  it('node-redis: a dead server gives RedisUnavailableError', async () => {
    const doomed = await startServer();
    const client = redis.createClient({ url: doomed.url, socket: { reconnectStrategy: false } });
    client.on('error', () => undefined);
    await client.connect();
    const locks = new LockClient(client, { commandTimeout: 1_000 });
    await doomed.stop(true);
    await assert.rejects(locks.getLock('x').lock(), RedisUnavailableError);
    await locks.shutdown();
    await client.close().catch(() => undefined);
  });
});
