import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { assertNoKeyWithoutTtl, lockQueue } from '../../harness/keys.js';
import type { Redis } from 'ioredis';
import { RedisUnavailableError } from '../../src/index.js';
import { startFixture, type FixtureProcess } from '../../harness/fixture-process.js';
import { eventually, sleep } from '../../harness/eventually.js';
import { startServer, type TestServer } from '../../harness/server.js';

let server: TestServer;
let redis: Redis;
before(async () => {
  server = await startServer();
  redis = server.client();
});

const { queueKey, waitersKey, queued, waitQueued } = lockQueue(() => redis);
/** A child process needs a while to start under load: wait for it, then for its place. */
const childQueued = async (child: FixtureProcess, name: string, length: number): Promise<void> => {
  await child.waitFor('waiting', 60_000);
  await waitQueued(name, length, 30_000);
};

describe('FairLock: waiter liveness', () => {
  it('a live waiter keeps its place well past fairWaiterTimeout', async () => {
    const options = { fairWaiterTimeout: 500 };
    const holder = server.lockClient(options).getFairLock('live');
    const a = server.lockClient(options).getFairLock('live');
    const b = server.lockClient(options).getFairLock('live');
    await holder.lock();
    const granted: string[] = [];
    const doneA = a.lock().then(() => granted.push('a'));
    await waitQueued('live', 1);
    const doneB = b.lock().then(() => granted.push('b'));
    await waitQueued('live', 2);
    await sleep(1_600);
    assert.equal(await queued('live'), 2);
    await holder.unlock();
    await doneA;
    await a.unlock();
    await doneB;
    await b.unlock();
    assert.deepEqual(granted, ['a', 'b']);
  });

  it('grants in request order across OS processes', async () => {
    const holder = server.lockClient().getFairLock('processes');
    await holder.lock();
    const child = startFixture('fair-lock-waiter', [server.port, 'processes', 10_000, 300]);
    await childQueued(child, 'processes', 1);
    const local = server.lockClient().getFairLock('processes');
    // The child prints "acquired" 300 ms before it releases: by then the line has arrived.
    const waiting = local.lock().then(() => child.lines.includes('acquired'));
    await waitQueued('processes', 2);
    await holder.unlock();
    assert.equal(await waiting, true, 'the other process queued first and was served first');
    await local.unlock();
    assert.equal(await child.exited, 0);
  });

  it('a killed waiter does not block the queue past fairWaiterTimeout', async () => {
    const timeout = 1_000;
    const holder = server.lockClient().getFairLock('killed');
    await holder.lock();
    const child = startFixture('fair-lock-waiter', [server.port, 'killed', timeout, 0]);
    await childQueued(child, 'killed', 1);
    const survivor = server.lockClient({ fairWaiterTimeout: timeout }).getFairLock('killed');
    const waiting = survivor.lock();
    await waitQueued('killed', 2);
    const killed = Date.now();
    child.child.kill('SIGKILL');
    await child.exited;
    await holder.unlock();
    // The dead head still has its place: nobody may take the free lock ahead of it yet.
    assert.equal(await server.lockClient().getFairLock('killed').tryLock(), false);
    await waiting;
    const waited = Date.now() - killed;
    // Its place was refreshed at most timeout/3 before the kill, so it lapsed 2/3 timeout later at the earliest.
    assert.ok(waited >= timeout / 2, `skipped too early: ${waited} ms`);
    assert.ok(waited < timeout + 3_000, `blocked for ${waited} ms`);
    await survivor.unlock();
    // The dead waiter's unclaimed hand-over mark expires with its short reservation TTL.
    await eventually(async () => (await redis.exists(queueKey('killed'), waitersKey('killed'))) === 0, 5_000);
  });
});

describe('FairLock: a frozen server', () => {
  // Frozen before the wait starts. (A waiter already parked when the server freezes is held by the
  // engine's unsubscribe, for every pub/sub lock alike: reported to the engine, not fair-lock specific.)
  it('tryLock with waitTime settles by its waitTime; once the server is back no place is left', async () => {
    const frozen = await startServer();
    const raw = frozen.client();
    await frozen.lockClient().getFairLock('frozen').lock({ leaseTime: 60_000 });
    const waiter = frozen.lockClient({ commandTimeout: 5_000 }).getFairLock('frozen');
    assert.equal(await waiter.tryLock(), false); // warm connection and scripts
    frozen.freeze();
    const started = Date.now();
    let result: unknown;
    try {
      result = await waiter.tryLock({ waitTime: 300 }).catch((error: unknown) => error);
    } finally {
      frozen.resume();
    }
    const took = Date.now() - started;
    assert.ok(result === false || result instanceof RedisUnavailableError, String(result));
    assert.ok(took < 300 + 1_500, `took ${took} ms`);
    // The cut attempt may have queued when it finally ran; the cut leave, sent after it, removes it.
    await eventually(async () => (await raw.llen(queueKey('frozen'))) === 0, 10_000);
  });

  it('lock() without waitTime rejects with RedisUnavailableError after commandTimeout', async () => {
    const frozen = await startServer();
    await frozen.lockClient().getFairLock('frozen-lock').lock({ leaseTime: 60_000 });
    const waiter = frozen.lockClient({ commandTimeout: 300 }).getFairLock('frozen-lock');
    assert.equal(await waiter.tryLock(), false);
    frozen.freeze();
    const started = Date.now();
    let error: unknown;
    try {
      error = await waiter.lock().catch((failure: unknown) => failure);
    } finally {
      frozen.resume();
    }
    assert.ok(error instanceof RedisUnavailableError, String(error));
    assert.ok(Date.now() - started < 300 + 1_500, `took ${Date.now() - started} ms`);
    await eventually(async () => (await frozen.client().llen(queueKey('frozen-lock'))) === 0, 10_000);
  });
});

describe('FairLock failures: after every test above', () => {
  it('leave no latchkey key without a TTL', async () => {
    await assertNoKeyWithoutTtl(redis, []);
  });
});
