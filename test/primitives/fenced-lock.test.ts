import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { assertNoKeyWithoutTtl } from '../../harness/keys.js';
import { fileURLToPath } from 'node:url';
import type { Redis } from 'ioredis';
import { LockLostError, LockNotHeldError } from '../../src/index.js';
import { startFixture, startTs } from '../../harness/fixture-process.js';
import { eventually, sleep } from '../../harness/eventually.js';
import { startServer, type TestServer } from '../../harness/server.js';
import { fenceCounterKey } from '../../src/keys.js';
import { clusterSlot } from '../../src/redis/cluster-slot.js';

let server: TestServer;
let redis: Redis;
before(async () => {
  server = await startServer();
  redis = server.client();
});

const counterKey = (name: string): string => fenceCounterKey('latchkey:', name);

function assertStrictlyIncreasing(tokens: readonly bigint[]): void {
  for (let i = 1; i < tokens.length; i++)
    assert.ok(tokens[i]! > tokens[i - 1]!, `token ${tokens[i]} after ${tokens[i - 1]} at ${i}`);
}

describe('FencedLock: tokens', () => {
  it('strictly increase over every acquisition from two clients and another OS process', async () => {
    const name = 'many-holders';
    const log = 'test:fenced-log';
    const child = startFixture('fenced-lock-worker', [server.port, name, 30, log]);
    const worker = async (lock: ReturnType<ReturnType<TestServer['lockClient']>['getFencedLock']>): Promise<void> => {
      for (let i = 0; i < 15; i++) {
        const token = await lock.lockAndGetToken();
        // Appended while holding the lock: the list is the order of holds across all processes.
        await redis.rpush(log, token.toString());
        await lock.unlock();
      }
    };
    await Promise.all([
      worker(server.lockClient().getFencedLock(name)),
      worker(server.lockClient().getFencedLock(name)),
      worker(server.lockClient().getFencedLock(name)),
    ]);
    await child.waitFor('done', 90_000);
    const tokens = (await redis.lrange(log, 0, -1)).map(BigInt);
    assert.equal(tokens.length, 75);
    assertStrictlyIncreasing(tokens);
    // Nothing else drew from this name's counter meanwhile: the tokens are consecutive.
    assert.equal(tokens.at(-1)! - tokens[0]!, 74n);
  });

  it('keep increasing after the lock key expired, and the counter has no TTL', async () => {
    const first = server.lockClient().getFencedLock('expired');
    const second = server.lockClient().getFencedLock('expired');
    const t1 = await first.lockAndGetToken({ leaseTime: 100 });
    await sleep(200);
    assert.equal(await first.isLocked(), false);
    assert.equal(await redis.pttl(counterKey('expired')), -1);
    const t2 = await second.lockAndGetToken({ leaseTime: 100 });
    assert.ok(t2 > t1, `${t2} > ${t1}`);
    await sleep(200);
    const t3 = await first.tryLockAndGetToken();
    assert.ok(t3 !== null && t3 > t2, `${t3} > ${t2}`);
    await first.unlock();
    await assert.rejects(second.unlock(), LockLostError);
  });

  it('a re-entrant acquisition keeps the holder token; getToken reads it from any handle', async () => {
    const locks = server.lockClient();
    const lock = locks.getFencedLock('reentrant');
    await locks.scope(async () => {
      const token = await lock.lockAndGetToken();
      assert.equal(await lock.tryLockAndGetToken(), token);
      const lease = await lock.acquire();
      assert.equal(lease.token, token);
      assert.equal(await lock.getHoldCount(), 3);
      assert.equal(await lock.getToken(), token);
      assert.equal(await server.lockClient().getFencedLock('reentrant').getToken(), token);
      await lease.release();
      await lock.unlock();
      await lock.unlock();
    });
    // Outside a scope, another acquisition on the same handle is another owner.
    const token = await lock.lockAndGetToken();
    assert.equal(await lock.tryLockAndGetToken(), null);
    await lock.unlock();
    await assert.rejects(lock.getToken(), LockNotHeldError);
    assert.ok((await lock.lockAndGetToken()) > token);
    await lock.unlock();
  });

  it('tryLockAndGetToken: null while held by another, the next token once it is free', async () => {
    const holder = server.lockClient().getFencedLock('try');
    const other = server.lockClient().getFencedLock('try');
    const held = await holder.lockAndGetToken();
    assert.equal(await other.tryLockAndGetToken(), null);
    assert.equal(await other.tryLockAndGetToken({ waitTime: 50 }), null);
    const waiting = other.tryLockAndGetToken({ waitTime: 5_000 });
    await sleep(50);
    await holder.unlock();
    assert.equal(await waiting, held + 1n);
    await other.unlock();
  });

  it('is the same lock as getLock() of that name; a plain holder has no token', async () => {
    const plain = server.lockClient().getLock('shared');
    const fenced = server.lockClient().getFencedLock('shared');
    await plain.lock();
    assert.equal(await fenced.tryLockAndGetToken(), null);
    await assert.rejects(fenced.getToken(), LockNotHeldError);
    await plain.unlock();
    assert.equal(await fenced.lockAndGetToken(), 1n);
    assert.equal(await plain.tryLock(), false);
    await fenced.unlock();
  });

  it('waits in the lock queue: fenced and plain waiters are served in the order they asked', async () => {
    const holder = server.lockClient().getFencedLock('queued');
    const first = await holder.lockAndGetToken();
    const granted: string[] = [];
    const tokens: bigint[] = [];
    const fencedA = server.lockClient().getFencedLock('queued');
    const plain = server.lockClient().getLock('queued');
    const fencedB = server.lockClient().getFencedLock('queued');
    const waits = [
      fencedA.lockAndGetToken().then(async (token) => {
        granted.push('fenced-a');
        tokens.push(token);
        await fencedA.unlock();
      }),
    ];
    await eventually(async () => (await redis.llen('latchkey:{queued}:lock:queue')) === 1, 10_000);
    waits.push(
      plain.lock().then(async () => {
        granted.push('plain');
        await plain.unlock();
      }),
    );
    await eventually(async () => (await redis.llen('latchkey:{queued}:lock:queue')) === 2, 10_000);
    waits.push(
      fencedB.lockAndGetToken().then(async (token) => {
        granted.push('fenced-b');
        tokens.push(token);
        await fencedB.unlock();
      }),
    );
    await eventually(async () => (await redis.llen('latchkey:{queued}:lock:queue')) === 3, 10_000);
    await holder.unlock();
    await Promise.all(waits);
    assert.deepEqual(granted, ['fenced-a', 'plain', 'fenced-b']);
    assert.deepEqual(tokens, [first + 1n, first + 2n]);
  });

  it('refuses bad input before reaching Redis', async () => {
    const locks = server.lockClient();
    assert.throws(() => locks.getFencedLock(7 as never), { name: 'TypeError', message: /`name`/ });
    const lock = locks.getFencedLock('input');
    await assert.rejects(lock.lockAndGetToken({ leaseTime: -1 }), { name: 'RangeError', message: /`leaseTime`/ });
    await assert.rejects(lock.lockAndGetToken('soon' as never), { name: 'TypeError', message: /`options`/ });
    await assert.rejects(lock.tryLockAndGetToken({ waitTime: '1' as never }), {
      name: 'TypeError',
      message: /`waitTime`/,
    });
    await assert.rejects(lock.tryLockAndGetToken({ signal: {} as never }), { name: 'TypeError', message: /`signal`/ });
    assert.equal(await redis.exists(counterKey('input')), 0);
  });
});

describe('FencedLock: the fencing example', () => {
  it('examples/fencing-token.ts refuses the stale writer', async () => {
    const file = fileURLToPath(new URL('../../examples/fencing-token.ts', import.meta.url));
    const run = startTs(file, [], { REDIS_URL: server.url });
    assert.equal(await run.exited, 0);
    assert.match(
      run.lines.join('\n'),
      /token A (\d+), token B (\d+): stale write by A refused; the report says "final by B"/,
    );
  });
});

describe('FencedLock: counters', () => {
  it('many names leave one permanent key per hash slot they fall in, and none per name', async () => {
    const locks = server.lockClient();
    const names = Array.from({ length: 300 }, (_, i) => `many-names-${i}`);
    const before = new Set(await redis.keys('latchkey:fence:*'));
    const last = new Map<string, bigint>();
    for (const name of names) {
      const lock = locks.getFencedLock(name);
      last.set(name, await lock.lockAndGetToken());
      await lock.unlock();
    }
    const slots = new Set(names.map((name) => clusterSlot(`{${name}}`)));
    const added = (await redis.keys('latchkey:fence:*')).filter((key) => !before.has(key));
    assert.ok(added.length <= slots.size, `${added.length} counters for ${slots.size} slots`);
    for (const key of added) assert.equal(await redis.pttl(key), -1);
    assert.deepEqual(await redis.keys('latchkey:{many-names-*}:lock:fence'), []);
    // Each name's tokens still strictly increase, from another client too.
    const other = server.lockClient();
    for (const name of names.slice(0, 20)) {
      const lock = other.getFencedLock(name);
      const token = await lock.lockAndGetToken();
      assert.ok(token > last.get(name)!, `${name}: ${token} > ${last.get(name)}`);
      await lock.unlock();
    }
  });

  it('leaves no latchkey key without a TTL but the fencing counters', async () => {
    await assertNoKeyWithoutTtl(redis, [/^latchkey:fence:\{\d+\}$/]);
  });
});
