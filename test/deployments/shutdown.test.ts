import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { startCluster, type TestCluster } from '../../harness/cluster.js';
import { startSentinel, type TestSentinel } from '../../harness/sentinel.js';
import { startFixture, type FixtureProcess } from '../../harness/fixture-process.js';
import { sleep } from '../../harness/eventually.js';
import { startServer, type TestServer } from '../../harness/server.js';

let server: TestServer;
let cluster: TestCluster;
let sentinel: TestSentinel;
before(async () => {
  [server, cluster, sentinel] = await Promise.all([startServer(), startCluster(), startSentinel()]);
});

/** The fixture must exit by itself, with code 0, within `ms`. */
async function assertExitsWithin(child: FixtureProcess, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const exited = await Promise.race([
    child.exited,
    new Promise<'still running'>((resolve) => (timer = setTimeout(() => resolve('still running'), ms))),
  ]);
  clearTimeout(timer);
  assert.equal(exited, 0, `the process after shutdown: ${String(exited)}; it printed ${child.lines.join(' / ')}`);
}

/** The fixture in `mode` on a standalone server or Sentinel group started for it alone. */
async function onServersOfItsOwn(
  library: string,
  deployment: string,
  mode: 'at-once' | 'servers-gone',
): Promise<{ child: FixtureProcess; stopServers: () => Promise<unknown> }> {
  const own = deployment === 'sentinel' ? await startSentinel() : await startServer();
  const address = 'sentinel' in own ? own.sentinel : own;
  const child = startFixture('shutdown-exits', [
    library,
    deployment,
    `${address.host}:${address.port}`,
    'name' in own ? own.name : '-',
    mode,
  ]);
  const stopServers = (): Promise<unknown> =>
    Promise.all('sentinel' in own ? [own.sentinel.stop(true), own.primary.stop(true)] : [own.stop(true)]);
  return { child, stopServers };
}

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
        await assertExitsWithin(child, 5_000);
        assert.deepEqual(child.lines, ['waited: false', 'closed']);
      });
});

describe('shutdown() while latchkey still opens its connections, the servers gone right after', () => {
  for (const library of ['ioredis', 'node-redis'])
    for (const deployment of ['standalone', 'sentinel'])
      it(`${library} on ${deployment}`, async () => {
        // Servers of its own: they stop as soon as the process says it closed everything.
        const { child, stopServers } = await onServersOfItsOwn(library, deployment, 'at-once');
        await child.waitFor('closed', 20_000);
        await stopServers();
        await assertExitsWithin(child, 5_000);
      });
});

describe('shutdown() after the servers died, its connections reconnecting to nothing', () => {
  for (const library of ['ioredis', 'node-redis'])
    for (const deployment of ['standalone', 'sentinel'])
      it(`${library} on ${deployment}`, async () => {
        const { child, stopServers } = await onServersOfItsOwn(library, deployment, 'servers-gone');
        await child.waitFor('ready', 20_000);
        await stopServers();
        // Long enough for every connection to have noticed and to be between reconnect attempts.
        await sleep(500);
        child.child.kill('SIGUSR2');
        await child.waitFor('closed', 20_000);
        // (node-redis' Sentinel client prints its failed reconnects on stdout: only the exit is checked.)
        await assertExitsWithin(child, 5_000);
      });
});
