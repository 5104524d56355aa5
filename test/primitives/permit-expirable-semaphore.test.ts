import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { LockNotHeldError, RedisUnavailableError } from '../../src/index.js';
import { commandCalls, startServer, type TestServer } from '../../harness/server.js';
import { keysWithTtl, keysLeft } from '../../harness/keys.js';
import { sleep } from '../../harness/eventually.js';
import { contextOf } from '../../src/client.js';

let server: TestServer;
before(async () => {
  server = await startServer();
});

describe('PermitExpirableSemaphore: permits with ids', () => {
  it('acquire returns an unguessable id; release by id; a second release rejects', async () => {
    const semaphore = server.lockClient().getPermitExpirableSemaphore('ids');
    assert.equal(await semaphore.trySetPermits(2), true);
    assert.equal(await semaphore.trySetPermits(9), false);
    const first = await semaphore.acquire();
    const second = await semaphore.tryAcquire({ leaseTime: 60_000 });
    assert.match(first, /^[\w-]{22,}$/);
    assert.ok(second !== null && second !== first);
    assert.equal(await semaphore.tryAcquire(), null);
    assert.equal(await semaphore.availablePermits(), 0);
    // Another client may release a permit it was handed the id of.
    await server.lockClient().getPermitExpirableSemaphore('ids').release(first);
    assert.equal(await semaphore.availablePermits(), 1);
    await assert.rejects(semaphore.release(first), LockNotHeldError);
    assert.equal(await semaphore.tryRelease(first), false);
    assert.equal(await semaphore.tryRelease('no-such-permit'), false);
    assert.equal(await semaphore.tryRelease(second), true);
    assert.equal(await semaphore.availablePermits(), 2);
  });

  it('an expired permit returns to the pool without anyone releasing it', async () => {
    const semaphore = server.lockClient().getPermitExpirableSemaphore('expire');
    await semaphore.trySetPermits(1);
    const id = await semaphore.acquire({ leaseTime: 300 });
    assert.equal(await semaphore.availablePermits(), 0);
    await sleep(400);
    assert.equal(await semaphore.availablePermits(), 1);
    await assert.rejects(semaphore.release(id), LockNotHeldError);
    assert.equal(await semaphore.updateLeaseTime(id, 1_000), false);
  });

  it('a waiter on another client gets the permit when the lease runs out', async () => {
    const holder = server.lockClient().getPermitExpirableSemaphore('lease-wait');
    await holder.trySetPermits(1);
    await holder.acquire({ leaseTime: 500 });
    const started = Date.now();
    const id = await server.lockClient().getPermitExpirableSemaphore('lease-wait').acquire({ leaseTime: 5_000 });
    const waited = Date.now() - started;
    assert.ok(waited >= 400 && waited < 3_000, `woken at the lease's end (${waited} ms)`);
    assert.equal(typeof id, 'string');
  });

  it('a release wakes a waiter at once', async () => {
    const holder = server.lockClient().getPermitExpirableSemaphore('release-wakes');
    await holder.trySetPermits(1);
    const id = await holder.acquire();
    const waiting = server.lockClient().getPermitExpirableSemaphore('release-wakes').tryAcquire({ waitTime: 5_000 });
    await sleep(100);
    const released = Date.now();
    await holder.release(id);
    assert.notEqual(await waiting, null);
    assert.ok(Date.now() - released < 900, 'pub/sub, not the 1 s fallback');
  });

  it('updateLeaseTime extends a permit that is still out', async () => {
    const semaphore = server.lockClient().getPermitExpirableSemaphore('update');
    await semaphore.trySetPermits(1);
    const id = await semaphore.acquire({ leaseTime: 300 });
    assert.equal(await semaphore.updateLeaseTime(id, 2_000), true);
    await sleep(450);
    assert.equal(await semaphore.availablePermits(), 0);
    assert.equal(await semaphore.tryRelease(id), true);
  });

  it('abort rejects with the reason and leaves no permit taken', async () => {
    const locks = server.lockClient();
    const semaphore = locks.getPermitExpirableSemaphore('abort');
    await semaphore.trySetPermits(1);
    const id = await semaphore.acquire();
    const controller = new AbortController();
    const waiting = semaphore.acquire({ signal: controller.signal });
    await sleep(50);
    controller.abort(new Error('stop'));
    await assert.rejects(waiting, /stop/);
    await semaphore.release(id);
    assert.equal(await semaphore.availablePermits(), 1);
    assert.equal(contextOf(locks).waiters.channelCount, 0);
  });
});

describe('PermitExpirableSemaphore: crashes, outages, bad input', () => {
  it('a holder process killed mid-work loses no permit and duplicates none', async () => {
    const name = 'killed';
    const semaphore = server.lockClient().getPermitExpirableSemaphore(name);
    await semaphore.trySetPermits(3);
    const fixture = fileURLToPath(new URL('../fixtures/semaphore-holder.ts', import.meta.url));
    const child = spawn(process.execPath, ['--import', 'tsx', fixture, String(server.port), name, '2', '1200'], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const [line] = (await once(child.stdout, 'data')) as [Buffer];
    const ids = JSON.parse(line.toString()) as string[];
    assert.equal(ids.length, 2);
    child.kill('SIGKILL');
    await once(child, 'exit');
    assert.equal(await semaphore.availablePermits(), 1, 'the dead holder still counts until its lease ends');
    // Waiters for the two permits are served when the lease ends, with no one releasing anything.
    const waiters = [
      semaphore.acquire({ leaseTime: 10_000 }),
      semaphore.tryAcquire({ waitTime: 5_000, leaseTime: 10_000 }),
    ];
    const mine = await semaphore.acquire({ leaseTime: 10_000 });
    const got = await Promise.all(waiters);
    assert.ok(got.every((id): id is string => typeof id === 'string'));
    assert.equal(await semaphore.availablePermits(), 0);
    assert.equal(await semaphore.tryAcquire(), null, 'no fourth permit appeared');
    for (const id of ids) assert.equal(await semaphore.tryRelease(id), false);
    for (const id of [mine, ...got]) await semaphore.release(id);
    assert.equal(await semaphore.availablePermits(), 3);
  });

  it('a frozen server fails the call in time and the permit is given back', async () => {
    const own = await startServer();
    const semaphore = own.lockClient({ commandTimeout: 300 }).getPermitExpirableSemaphore('frozen');
    await semaphore.trySetPermits(2);
    own.freeze();
    try {
      await assert.rejects(semaphore.acquire(), RedisUnavailableError);
    } finally {
      own.resume();
    }
    await sleep(200);
    assert.equal(await semaphore.availablePermits(), 2);
  });

  it('refuses bad input before anything reaches Redis', async () => {
    const redis = server.client();
    const locks = server.lockClient();
    const semaphore = locks.getPermitExpirableSemaphore('bad-input');
    await redis.config('RESETSTAT');
    await assert.rejects(semaphore.trySetPermits(-1), { name: 'RangeError', message: /`permits`/ });
    await assert.rejects(semaphore.acquire({ leaseTime: 0 }), { name: 'RangeError', message: /`leaseTime`/ });
    await assert.rejects(semaphore.acquire({ leaseTime: -5 }), { name: 'RangeError', message: /`leaseTime`/ });
    await assert.rejects(semaphore.tryAcquire({ waitTime: Infinity }), { name: 'RangeError', message: /`waitTime`/ });
    await assert.rejects(semaphore.acquire(5 as never), { name: 'TypeError', message: /`options`/ });
    await assert.rejects(semaphore.release(''), { name: 'RangeError', message: /`permitId`/ });
    await assert.rejects(semaphore.tryRelease(1 as unknown as string), { name: 'TypeError', message: /`permitId`/ });
    await assert.rejects(semaphore.updateLeaseTime('x', Number.NaN), { name: 'RangeError', message: /`leaseTime`/ });
    assert.throws(() => locks.getPermitExpirableSemaphore(null as unknown as string), {
      name: 'TypeError',
      message: /`name`/,
    });
    assert.equal((await commandCalls(redis, 'evalsha')) + (await commandCalls(redis, 'eval')), 0);
  });

  it('keeps the total without TTL; the leases key expires with its last lease', async () => {
    const redis = server.client();
    const semaphore = server.lockClient().getPermitExpirableSemaphore('ttl');
    await semaphore.trySetPermits(2);
    await semaphore.acquire({ leaseTime: 400 });
    const keys = await keysWithTtl(redis, 'latchkey:{ttl}:*');
    assert.equal(keys.get('latchkey:{ttl}:expirable-semaphore:total'), -1);
    const leaseTtl = keys.get('latchkey:{ttl}:expirable-semaphore:leases') ?? 0;
    assert.ok(leaseTtl > 0 && leaseTtl <= 400);
    const unleased = await semaphore.acquire();
    assert.equal(
      await redis.pttl('latchkey:{ttl}:expirable-semaphore:leases'),
      -1,
      'an unleased permit is kept until released',
    );
    await semaphore.release(unleased);
    assert.ok((await redis.pttl('latchkey:{ttl}:expirable-semaphore:leases')) > 0);
    await sleep(450);
    assert.deepEqual(await keysLeft(redis, 'ttl'), ['latchkey:{ttl}:expirable-semaphore:total']);
  });
});
