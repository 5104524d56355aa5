import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { LockLostError, LockNotHeldError, RedisUnavailableError, type LockClient } from '../../src/index.js';
import { commandCalls, startServer, type TestServer } from '../../harness/server.js';
import { keysWithTtl, keysLeft } from '../../harness/keys.js';
import { sleep } from '../../harness/eventually.js';
import { contextOf } from '../../src/client.js';

let server: TestServer;
before(async () => {
  server = await startServer();
});

describe('ReadWriteLock: sharing and exclusion', () => {
  it('readers share across clients; a writer waits for the last one and is woken at once', async () => {
    const readerA = server.lockClient().getReadWriteLock('share');
    const readerB = server.lockClient().getReadWriteLock('share');
    const writer = server.lockClient().getReadWriteLock('share');
    await readerA.readLock().lock();
    assert.equal(await readerB.readLock().tryLock(), true);
    assert.equal(await writer.writeLock().tryLock({ waitTime: 50 }), false);
    assert.equal(await writer.readLock().isLocked(), true);
    assert.equal(await writer.writeLock().isLocked(), false);

    const started = Date.now();
    const waiting = writer.writeLock().lock();
    await sleep(100);
    await readerA.readLock().unlock();
    await sleep(100);
    assert.equal(await writer.writeLock().isLocked(), false, 'one reader is still inside');
    await readerB.readLock().unlock();
    await waiting;
    // Readers hold watchdog leases of 30 s: getting in this soon proves the release woke the writer.
    assert.ok(Date.now() - started < 5_000);
    assert.equal(await writer.writeLock().isHeldByCurrentOwner(), true);
    await writer.writeLock().unlock();
  });

  it('a writer excludes readers and writers; its release wakes every waiting reader', async () => {
    const writer = server.lockClient().getReadWriteLock('exclusive');
    const otherClient = server.lockClient();
    await writer.writeLock().lock();
    const other = otherClient.getReadWriteLock('exclusive');
    assert.equal(await other.writeLock().tryLock(), false);
    assert.equal(await other.readLock().tryLock({ waitTime: 50 }), false);

    const readers = [otherClient, otherClient, server.lockClient()].map((client) =>
      client.getReadWriteLock('exclusive'),
    );
    const started = Date.now();
    const waits = readers.map((reader) => reader.readLock().lock());
    await sleep(100);
    await writer.writeLock().unlock();
    await Promise.all(waits);
    assert.ok(Date.now() - started < 5_000);
    for (const reader of readers) assert.equal(await reader.readLock().getHoldCount(), 1);
    for (const reader of readers) await reader.readLock().unlock();
    assert.equal(await other.readLock().isLocked(), false);
  });

  it('re-enters both ways inside a scope and counts holds per side', async () => {
    const locks = server.lockClient();
    const rw = locks.getReadWriteLock('reentrant');
    await locks.scope(async () => {
      await rw.readLock().lock();
      await rw.readLock().lock();
      assert.equal(await rw.readLock().getHoldCount(), 2);
      await rw.readLock().unlock();
      assert.equal(await rw.readLock().isLocked(), true);
      await rw.readLock().unlock();
      assert.equal(await rw.readLock().isLocked(), false);
      await assert.rejects(rw.readLock().unlock(), LockNotHeldError);

      await rw.writeLock().lock();
      assert.equal(await rw.writeLock().tryLock(), true);
      assert.equal(await rw.writeLock().getHoldCount(), 2);
      await rw.writeLock().unlock();
      await rw.writeLock().unlock();
      assert.equal(await rw.writeLock().isLocked(), false);
      await assert.rejects(rw.writeLock().unlock(), LockNotHeldError);
    });
    // Outside a scope two writers on one handle are two owners.
    await rw.writeLock().lock();
    assert.equal(await rw.writeLock().tryLock(), false);
    await rw.writeLock().unlock();
  });

  it('the writer may downgrade: read while writing, then keep reading after the write is released', async () => {
    const locks = server.lockClient();
    const rw = locks.getReadWriteLock('downgrade');
    const other = server.lockClient().getReadWriteLock('downgrade');
    await locks.scope(async () => {
      await rw.writeLock().lock();
      assert.equal(await rw.readLock().tryLock(), true);
      assert.equal(await other.readLock().tryLock(), false, 'the write hold still excludes other readers');
      assert.equal(await rw.writeLock().tryLock(), true, 'the writer re-enters while it also reads');
      await rw.writeLock().unlock();
      await rw.writeLock().unlock();
      assert.equal(await rw.readLock().getHoldCount(), 1);
      assert.equal(await other.readLock().tryLock(), true, 'after the downgrade readers share');
      assert.equal(await other.writeLock().tryLock(), false);
      await other.readLock().unlock();
      await rw.readLock().unlock();
    });
    // Inside the write lock's own callback the read lock is the writer's too.
    await rw.writeLock().withLock(async () => {
      assert.equal(await rw.readLock().tryLock(), true);
      await rw.readLock().unlock();
    });
    // Outside both, a reader is another owner: the writer keeps it out.
    await rw.writeLock().lock();
    assert.equal(await rw.readLock().tryLock(), false);
    await rw.writeLock().unlock();
    assert.equal(await other.writeLock().tryLock(), true);
    await other.writeLock().unlock();
  });

  it('a reader cannot upgrade: the write lock waits while its own read hold exists', async () => {
    const rw = server.lockClient().getReadWriteLock('upgrade');
    await rw.readLock().lock();
    assert.equal(await rw.writeLock().tryLock({ waitTime: 100 }), false);
    const upgrade = rw.writeLock().lock();
    await sleep(50);
    await rw.readLock().unlock();
    await upgrade;
    assert.equal(await rw.writeLock().isHeldByCurrentOwner(), true);
    await rw.writeLock().unlock();
  });

  it('withLock and scope() make nested read and write locks one owner', async () => {
    const locks = server.lockClient();
    const outer = locks.getReadWriteLock('nested');
    const holds = await outer.writeLock().withLock(() =>
      locks
        .getReadWriteLock('nested')
        .readLock()
        .withLock(() => locks.getReadWriteLock('nested').readLock().getHoldCount()),
    );
    assert.equal(holds, 1);
    await locks.scope(async () => {
      await locks.getReadWriteLock('nested').writeLock().lock();
      assert.equal(await locks.getReadWriteLock('nested').readLock().tryLock(), true);
      await locks.getReadWriteLock('nested').readLock().unlock();
      await locks.getReadWriteLock('nested').writeLock().unlock();
    });
    // Outside a scope two getReadWriteLock() calls are two owners.
    await outer.readLock().lock();
    assert.equal(await locks.getReadWriteLock('nested').writeLock().tryLock(), false);
    await outer.readLock().unlock();
    assert.equal(await outer.writeLock().isLocked(), false);
  });
});

describe('ReadWriteLock: leases and the watchdog', () => {
  it('each reader has its own lease: one expiring leaves the others held', async () => {
    const short = server.lockClient().getReadWriteLock('per-hold');
    const long = server.lockClient({ watchdogTimeout: 300 }).getReadWriteLock('per-hold');
    const writer = server.lockClient().getReadWriteLock('per-hold');
    await short.readLock().lock({ leaseTime: 200 });
    await long.readLock().lock();
    await sleep(700);
    assert.equal(await short.readLock().getHoldCount(), 0, 'the short lease ran out');
    await assert.rejects(short.readLock().unlock(), LockLostError);
    assert.equal(await long.readLock().getHoldCount(), 1, 'the watchdog kept the other reader');
    assert.equal(await writer.writeLock().tryLock(), false);
    await long.readLock().unlock();
    assert.equal(await writer.writeLock().tryLock(), true);
    await writer.writeLock().unlock();
  });

  it("a reader leaving does not cut another reader's lease", async () => {
    const first = server.lockClient().getReadWriteLock('no-cut');
    const second = server.lockClient().getReadWriteLock('no-cut');
    const redis = server.client();
    await first.readLock().lock({ leaseTime: 3_000 });
    await second.readLock().lock({ leaseTime: 10_000 });
    await second.readLock().unlock();
    const ttl = await first.readLock().remainTimeToLive();
    assert.ok(ttl > 2_000 && ttl <= 3_000, `left ${ttl} ms`);
    assert.ok((await redis.pttl('latchkey:{no-cut}:rw:read')) > 2_000);
    await second.readLock().lock({ leaseTime: 200 });
    await second.readLock().unlock();
    assert.ok((await first.readLock().remainTimeToLive()) > 2_000);
    await first.readLock().unlock();
    assert.equal(await redis.exists('latchkey:{no-cut}:rw:read'), 0);
  });

  it('the watchdog keeps both sides alive past watchdogTimeout, and unlock stops it', async () => {
    const locks = server.lockClient({ watchdogTimeout: 300 });
    const writer = locks.getReadWriteLock('watchdog-w');
    const reader = locks.getReadWriteLock('watchdog-r');
    await writer.writeLock().lock();
    await reader.readLock().lock();
    await sleep(1_000);
    const other = server.lockClient();
    assert.equal(await other.getReadWriteLock('watchdog-w').readLock().tryLock(), false);
    assert.equal(await other.getReadWriteLock('watchdog-r').writeLock().tryLock(), false);
    await writer.writeLock().unlock();
    await reader.readLock().unlock();
    assert.equal(contextOf(locks).watchdog.size, 0);
  });

  it('renews many read holds in one batch script call per period', async () => {
    const locks = server.lockClient({ watchdogTimeout: 600 });
    const readers = Array.from({ length: 50 }, (_, i) => locks.getReadWriteLock(`batch-${i}`).readLock());
    for (const reader of readers) await reader.lock();
    const redis = server.client();
    await redis.config('RESETSTAT');
    await sleep(650); // three renewal periods of 200 ms
    const calls = (await commandCalls(redis, 'evalsha')) + (await commandCalls(redis, 'eval'));
    // Per period one renewal call and, after it, one loss-detection check of the changed keys.
    assert.ok(calls >= 1 && calls <= 10, `${calls} script calls renewed 50 read holds over three periods`);
    for (const reader of readers) assert.equal(await reader.getHoldCount(), 1);
    for (const reader of readers) await reader.unlock();
  });

  it('a read hold removed behind its back is reported lost', async () => {
    const locks = server.lockClient({ watchdogTimeout: 300 });
    const lost = new Promise<string>((resolve) => locks.once('lockLost', (name) => resolve(name)));
    const lease = await locks.getReadWriteLock('lost').readLock().acquire();
    assert.equal(await server.lockClient().getReadWriteLock('lost').readLock().forceUnlock(), true);
    assert.equal(await lost, 'lost');
    assert.equal(lease.signal.aborted, true);
    await assert.rejects(lease.release(), LockLostError);
  });

  it('a write lease expires by itself; a waiting reader then gets in', async () => {
    const rw = server.lockClient().getReadWriteLock('write-lease');
    const other = server.lockClient().getReadWriteLock('write-lease');
    await rw.writeLock().lock({ leaseTime: 200 });
    const remaining = await rw.writeLock().remainTimeToLive();
    assert.ok(remaining > 0 && remaining <= 200);
    assert.equal(await other.readLock().tryLock({ waitTime: 2_000 }), true, 'got in after the lease');
    await other.readLock().unlock();
  });

  it('a reader process killed mid-hold blocks a writer only until its lease runs out', async () => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', '--input-type=module', '-e', childHoldingRead(server.port)],
      { stdio: ['ignore', 'pipe', 'inherit'], cwd: fileURLToPath(new URL('../..', import.meta.url)) },
    );
    const writer = server.lockClient().getReadWriteLock('crash');
    try {
      await new Promise<void>((resolve, reject) => {
        child.stdout.on('data', (chunk: Buffer) => (chunk.toString().includes('reading') ? resolve() : undefined));
        child.once('exit', (code) => reject(new Error(`child exited with ${code}`)));
      });
      assert.equal(await writer.writeLock().tryLock(), false, 'the other process reads');
    } finally {
      child.kill('SIGKILL');
    }
    const started = Date.now();
    assert.equal(await writer.writeLock().tryLock({ waitTime: 5_000 }), true);
    assert.ok(Date.now() - started < 3_000, 'free within about one watchdogTimeout (500 ms)');
    await writer.writeLock().unlock();
  });
});

describe('ReadWriteLock: force, abort, keys, input', () => {
  it('forceUnlock of either side frees it and wakes the other side', async () => {
    const holder = server.lockClient().getReadWriteLock('force');
    const other = server.lockClient().getReadWriteLock('force');
    await holder.readLock().lock();
    const writing = other.writeLock().lock();
    await sleep(50);
    assert.equal(await other.readLock().forceUnlock(), true);
    await writing;
    const reading = holder.readLock().lock();
    await sleep(50);
    assert.equal(await holder.writeLock().forceUnlock(), true);
    await reading;
    assert.equal(await holder.writeLock().forceUnlock(), false);
    await holder.readLock().unlock();
  });

  for (const side of ['readLock', 'writeLock'] as const) {
    it(`${side}: an owner whose second hold was forced open hears it lost, not the first release remembered`, async () => {
      const locks = server.lockClient();
      const lock = locks.getReadWriteLock(`forced-again-${side}`)[side]();
      await locks.scope(async () => {
        await lock.lock();
        await lock.unlock(); // leaves the release's marker behind, for repeats of that release
        await lock.lock(); // the same owner, a new hold
        assert.equal(await server.lockClient().getReadWriteLock(`forced-again-${side}`)[side]().forceUnlock(), true);
        await assert.rejects(lock.unlock(), LockLostError);
      });
    });
  }

  it('abort stops a waiting reader and leaves nothing held', async () => {
    const writer = server.lockClient().getReadWriteLock('abort');
    const reader = server.lockClient().getReadWriteLock('abort');
    await writer.writeLock().lock();
    const controller = new AbortController();
    const waiting = reader.readLock().lock({ signal: controller.signal });
    await sleep(50);
    controller.abort(new Error('stop'));
    await assert.rejects(waiting, /stop/);
    await writer.writeLock().unlock();
    assert.equal(await reader.readLock().isLocked(), false);
  });

  it('a frozen server gives the caller its timeout or an error, never a hang', async () => {
    const frozen = await startServer();
    const rw = frozen.lockClient({ commandTimeout: 300 }).getReadWriteLock('frozen');
    frozen.freeze();
    try {
      const started = Date.now();
      // It could not ask: that is no answer about the lock.
      await assert.rejects(rw.readLock().tryLock({ waitTime: 200 }), RedisUnavailableError);
      await assert.rejects(rw.writeLock().lock(), RedisUnavailableError);
      // Nothing is held, which this process knows without asking.
      await assert.rejects(rw.readLock().unlock(), LockNotHeldError);
      assert.ok(Date.now() - started < 3_000);
    } finally {
      frozen.resume();
    }
    // The cut attempts were undone once the server answered again: nothing is left held.
    await sleep(200);
    assert.equal(await rw.readLock().isLocked(), false);
    assert.equal(await rw.writeLock().isLocked(), false);
  });

  it('every key has a TTL while held and none is left after release', async () => {
    const redis = server.client();
    const a = server.lockClient().getReadWriteLock('keys');
    const b = server.lockClient().getReadWriteLock('keys');
    // The writer downgrades: its read lease outlives its write lock.
    const read = await a.writeLock().withLock(() => a.readLock().acquire({ leaseTime: 5_000 }));
    await b.readLock().lock();
    for (const [key, ttl] of await keysWithTtl(redis, 'latchkey:{keys}*')) assert.ok(ttl > 0, `${key} has TTL ${ttl}`);
    await read.release();
    await b.readLock().unlock();
    assert.deepEqual(await keysLeft(redis, 'keys'), []);
  });

  it('many readers and writers from two clients never overlap a writer with anyone', async () => {
    const clients: LockClient[] = [server.lockClient(), server.lockClient()];
    let readers = 0;
    let writers = 0;
    let violations = 0;
    let maxReaders = 0;
    const task = async (client: LockClient, index: number): Promise<void> => {
      const rw = client.getReadWriteLock('stress');
      for (let i = 0; i < 15; i++) {
        if ((index + i) % 4 === 0) {
          await rw.writeLock().withLock(async () => {
            writers++;
            if (writers !== 1 || readers !== 0) violations++;
            await sleep(2);
            writers--;
          });
        } else {
          await rw.readLock().withLock(async () => {
            readers++;
            maxReaders = Math.max(maxReaders, readers);
            if (writers !== 0) violations++;
            await sleep(2);
            readers--;
          });
        }
      }
    };
    await Promise.all(Array.from({ length: 8 }, (_, index) => task(clients[index % 2]!, index)));
    assert.equal(violations, 0);
    assert.ok(maxReaders > 1, 'readers did share');
  });

  it('refuses bad names before Redis', () => {
    const locks = server.lockClient();
    assert.throws(
      () => locks.getReadWriteLock(42 as unknown as string),
      (error: unknown) => error instanceof TypeError && /`name`/.test(error.message),
    );
    assert.throws(() => locks.getReadWriteLock(''), RangeError);
  });
});

function childHoldingRead(port: number): string {
  return `
    import { Redis } from 'ioredis';
    const { LockClient } = await import('./src/index.ts');
    const locks = new LockClient(new Redis({ port: ${port}, host: '127.0.0.1' }), { watchdogTimeout: 500 });
    await locks.getReadWriteLock('crash').readLock().lock();
    process.stdout.write('reading\\n');
    setInterval(() => undefined, 1_000);
  `;
}
