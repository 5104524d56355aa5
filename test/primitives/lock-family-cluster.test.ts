import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import type { LockClient, LockClientOptions } from '../../src/index.js';
import { startCluster, type TestCluster } from '../../harness/cluster.js';
import { sleep } from '../../harness/eventually.js';

// Every script of the fair, spin and fenced locks touches several keys; on a Cluster they only run
// when all of one lock's keys share its hash slot (CROSSSLOT otherwise).
let cluster: TestCluster;
before(async () => {
  cluster = await startCluster();
});

const lockClient = (options?: LockClientOptions): LockClient => cluster.lockClient(options);

describe('fair, spin and fenced locks on a real Redis Cluster', () => {
  it('FairLock queues, grants in order and leaves on abort, for names on every node', async () => {
    for (let n = 0; n < 6; n++) {
      const name = `cluster-fair:${n}`;
      const [a, b, c] = [lockClient(), lockClient(), lockClient()].map((locks) => locks.getFairLock(name));
      await a!.lock();
      const granted: string[] = [];
      const controller = new AbortController();
      const aborted = c!.lock({ signal: controller.signal }).catch(() => 'aborted');
      await sleep(30);
      const waiting = b!.lock().then(() => granted.push('b'));
      await sleep(30);
      controller.abort();
      assert.equal(await aborted, 'aborted');
      await a!.unlock();
      await waiting;
      await b!.unlock();
      assert.deepEqual(granted, ['b']);
    }
  });

  it('SpinLock excludes and hands over by polling', async () => {
    const a = lockClient().getSpinLock('cluster-spin', { initialDelay: 5, maxDelay: 40 });
    const b = lockClient().getSpinLock('cluster-spin', { initialDelay: 5, maxDelay: 40 });
    await a.lock();
    assert.equal(await b.tryLock(), false);
    const waiting = b.tryLock({ waitTime: 5_000 });
    await sleep(50);
    await a.unlock();
    assert.equal(await waiting, true);
    await b.unlock();
  });

  it('FencedLock tokens increase across clients for names on every node', async () => {
    for (let n = 0; n < 6; n++) {
      const name = `cluster-fenced:${n}`;
      const a = lockClient().getFencedLock(name);
      const b = lockClient().getFencedLock(name);
      const t1 = await a.lockAndGetToken();
      assert.equal(await a.getToken(), t1);
      await a.unlock();
      const t2 = await b.lockAndGetToken({ leaseTime: 5_000 });
      assert.ok(t2 > t1);
      await b.unlock();
    }
  });
});
