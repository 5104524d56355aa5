import { after, before } from 'node:test';
import * as ioredis from 'ioredis';
import { GlideClient, GlideClusterClient, Logger } from '@valkey/valkey-glide';
import { startCluster } from '../../harness/cluster.js';
import { startServer } from '../../harness/server.js';
import { clientCase, ioredisCases, type Deployments } from './client-cases.js';
import { describeConformance } from './conformance.js';

// The conformance suite on Valkey GLIDE (GlideClient, GlideClusterClient), against ioredis 5 for
// mutual exclusion. GLIDE logs Redis' error replies as warnings; the suite provokes some.
Logger.setLoggerConfig('off');
const deployments: Deployments = {};
before(async () => {
  [deployments.server, deployments.cluster] = await Promise.all([startServer(), startCluster()]);
});

const standalone = () =>
  GlideClient.createClient({
    addresses: [{ host: '127.0.0.1', port: deployments.server!.port }],
    requestTimeout: 2_000,
  });
const cluster = () =>
  GlideClusterClient.createClient({
    addresses: deployments.cluster!.nodes.map(({ host, port }) => ({ host, port })),
    requestTimeout: 2_000,
  });

const reference = ioredisCases('ioredis 5', ioredis, deployments, ['standalone', 'cluster']);
after(async () => {
  for (const peer of reference) await peer.close();
});
describeConformance(
  [
    clientCase('GLIDE', 'standalone', 'GlideConnection', deployments, standalone),
    clientCase('GLIDE', 'cluster', 'GlideConnection', deployments, cluster),
  ],
  (of) => reference.find((peer) => peer.deployment === of.deployment),
);
