import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import type { PrimitiveReport } from '../../src/cli/decode.js';
import type { Snapshot } from '../../src/cli/inspect.js';
import { startCluster, type TestCluster } from '../../harness/cluster.js';
import { startSentinel, type TestSentinel } from '../../harness/sentinel.js';
import { LockClient } from '../../src/index.js';
import { cli } from './run-cli.js';

let cluster: TestCluster;
let sentinel: TestSentinel;
before(async () => {
  [cluster, sentinel] = await Promise.all([startCluster(), startSentinel()]);
});

/** One lock name per primary (slot ranges 0-5460, 5461-10922, 10923-16383). */
async function namesOnEveryPrimary(): Promise<string[]> {
  const redis = cluster.client();
  const names = new Map<number, string>();
  for (let i = 0; names.size < 3; i++) {
    const slot = (await redis.call('CLUSTER', 'KEYSLOT', `order:${i}`)) as number;
    names.set(slot <= 5460 ? 0 : slot <= 10922 ? 1 : 2, `order:${i}`);
  }
  return [...names.values()];
}

describe('latchkey inspect and unlock on a Redis Cluster', () => {
  it('finds the locks of every primary from any one node, and unlocks one on another node', async () => {
    const locks = cluster.lockClient();
    const names = await namesOnEveryPrimary();
    for (const name of names) await locks.getLock(name).lock({ leaseTime: 60_000 });
    const url = `redis://127.0.0.1:${cluster.nodes[0]!.port}`;

    const { code, stdout, stderr } = await cli(['inspect', 'order:*', '--json', '--url', url]);
    assert.equal(code, 0, stderr);
    const snapshot = JSON.parse(stdout) as Snapshot;
    assert.equal(snapshot.mode, 'cluster');
    const found = snapshot.primitives as Extract<PrimitiveReport, { kind: 'lock' }>[];
    assert.deepEqual(found.map((p) => p.name).sort(), [...names].sort());
    assert.equal(new Set(found.map((p) => p.node)).size, 3, 'one lock on each primary');
    assert.ok(found.every((p) => p.holders[0]?.client === locks.id));

    // The lock whose slot is on the last node, through the first node's URL: no MOVED.
    const unlocked = await cli(['unlock', names[2]!, '--force', '--url', url]);
    assert.equal(unlocked.code, 0, unlocked.stderr);
    assert.equal(await locks.getLock(names[2]!).isLocked(), false);
  });
});

describe('latchkey inspect through Sentinel', () => {
  it('asks the Sentinel for the master and reads it', async () => {
    const locks = new LockClient(sentinel.client());
    await locks.getLock('sentinel:job').lock({ leaseTime: 60_000 });
    const address = `${sentinel.sentinel.host}:${sentinel.sentinel.port}`;
    const { code, stdout, stderr } = await cli(['inspect', '--json', '--sentinel', address, '--name', sentinel.name]);
    await locks.shutdown();
    assert.equal(code, 0, stderr);
    const snapshot = JSON.parse(stdout) as Snapshot;
    assert.equal(snapshot.mode, 'sentinel');
    assert.deepEqual(
      snapshot.primitives.map((p) => p.name),
      ['sentinel:job'],
    );
    const missingName = await cli(['inspect', '--sentinel', address]);
    assert.equal(missingName.code, 2);
  });
});
