import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { before, describe, it } from 'node:test';
import { GlideClient, GlideClusterClient, Logger } from '@valkey/valkey-glide';
import * as ioredis from 'ioredis';
import * as iovalkey from 'iovalkey';
import * as redis from 'redis';
import { findRedisServer } from '../../src/cli/redis-server.js';
import { startCluster } from '../../harness/cluster.js';
import { startSentinel } from '../../harness/sentinel.js';
import { startServer } from '../../harness/server.js';
import { clientCase, ioredisCases, nodeRedisCases, type Deployments } from './client-cases.js';
import { describeConformance } from './conformance.js';

// The conformance suite with Valkey 8 as the server (valkey-server on PATH: .ci/run installs it
// from Debian's bookworm-backports), for every client on every deployment it has. This file's
// servers are Valkey's; `npm run test:valkey` runs the primitives', safety and Redis tests on it too.
process.env.REDIS_SERVER_BIN = 'valkey-server';
Logger.setLoggerConfig('off');

const deployments: Deployments = {};
before(async () => {
  [deployments.server, deployments.cluster, deployments.sentinel] = await Promise.all([
    startServer(),
    startCluster(),
    startSentinel(),
  ]);
});

describe('the server of this file', () => {
  it('is Valkey 8 or later', () => {
    const version = execFileSync(findRedisServer(), ['--version'], { encoding: 'utf8' });
    const major = Number(/^Valkey server v=(\d+)\./.exec(version)?.[1]);
    assert.ok(major >= 8, version);
  });
});

const glide = (deployment: 'standalone' | 'cluster') =>
  clientCase('GLIDE', deployment, 'GlideConnection', deployments, () =>
    deployment === 'standalone'
      ? GlideClient.createClient({ addresses: [{ host: '127.0.0.1', port: deployments.server!.port }] })
      : GlideClusterClient.createClient({
          addresses: deployments.cluster!.nodes.map(({ host, port }) => ({ host, port })),
        }),
  );
const reference = ioredisCases('ioredis 5', ioredis, deployments);
describeConformance(
  [
    ...reference,
    ...nodeRedisCases('node-redis 5', redis, deployments),
    ...ioredisCases('iovalkey', iovalkey, deployments, ['standalone', 'sentinel']),
    glide('standalone'),
    glide('cluster'),
  ],
  (of) =>
    of.name === 'ioredis 5'
      ? undefined // the others are checked against it
      : reference.find((peer) => peer.deployment === of.deployment),
);
