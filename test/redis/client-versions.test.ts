import { after, before } from 'node:test';
import * as ioredis from 'ioredis';
import * as ioredis6 from 'ioredis6';
import * as iovalkey from 'iovalkey';
import * as redis from 'redis';
import * as redis4 from 'redis4';
import * as redis6 from 'redis6';
import { startCluster } from '../../harness/cluster.js';
import { startSentinel } from '../../harness/sentinel.js';
import { startServer } from '../../harness/server.js';
import { ioredisCases, nodeRedisCases, type Deployments } from './client-cases.js';
import { describeConformance } from './conformance.js';

// The conformance suite on every other version of the clients latchkey supports (package.json's
// peer ranges): node-redis 4 and 6, ioredis 6 (RESP3 by default), iovalkey. Each is checked
// against the reference clients (ioredis 5, node-redis 5) for mutual exclusion.
const deployments: Deployments = {};
before(async () => {
  [deployments.server, deployments.cluster, deployments.sentinel] = await Promise.all([
    startServer(),
    startCluster(),
    startSentinel(),
  ]);
});

const reference = ioredisCases('ioredis 5', ioredis, deployments);
after(async () => {
  for (const peer of reference) await peer.close();
});
describeConformance(
  [
    // RESP3 by default (latchkey's tracking link speaks RESP2 whatever the client speaks).
    ...ioredisCases('ioredis 6', ioredis6, deployments),
    // iovalkey's Cluster subscribes on one node only: refused (wrong-client.test.ts).
    ...ioredisCases('iovalkey', iovalkey, deployments, ['standalone', 'sentinel']),
    // node-redis 4 has no Sentinel client.
    ...nodeRedisCases('node-redis 4', redis4, deployments, ['standalone', 'cluster']),
    // RESP3 by default too.
    ...nodeRedisCases('node-redis 6', redis6, deployments),
    ...nodeRedisCases('node-redis 5, RESP3', redis, deployments, ['standalone'], { RESP: 3 }),
  ],
  (of) => reference.find((peer) => peer.deployment === of.deployment),
);
