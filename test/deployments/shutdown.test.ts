import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { startCluster, startSentinel, type TestCluster, type TestSentinel } from '../helpers/cluster.js';
import { startFixture } from '../helpers/fixture-process.js';
import { startServer, type TestServer } from '../helpers/redis.js';

let server: TestServer;
let cluster: TestCluster;
let sentinel: TestSentinel;
before(async () => {
  [server, cluster, sentinel] = await Promise.all([startServer(), startCluster(), startSentinel()]);
});

describe('shutdown() leaves nothing open that keeps the process alive', () => {
  for (const library of ['ioredis', 'node-redis'])
    for (const deployment of ['standalone', 'cluster', 'sentinel'])
      it(`${library} on ${deployment}`, async () => {
        const address =
          deployment === 'cluster' ? cluster.nodes[0]! : deployment === 'sentinel' ? sentinel.sentinel : server;
        const child = startFixture('shutdown-exits', [
          library,
          deployment,
          `${address.host}:${address.port}`,
          sentinel.name,
        ]);
        await child.waitFor('closed', 20_000);
        const exited = await Promise.race([
          child.exited,
          new Promise<'still running'>((resolve) => setTimeout(() => resolve('still running'), 5_000)),
        ]);
        assert.equal(exited, 0, `the process after shutdown: ${String(exited)}; it printed ${child.lines.join(' / ')}`);
        assert.deepEqual(child.lines, ['waited: false', 'closed']);
      });
});
