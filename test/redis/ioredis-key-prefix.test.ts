import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Cluster, Redis } from 'ioredis';
import { Redis as Redis6 } from 'ioredis6';
import { LockClient } from '../../src/index.js';
import type { RedisClientLike } from '../../src/redis/to-connection.js';
import { startServer, type TestServer } from '../../harness/server.js';
import { sleep } from '../../harness/eventually.js';

/**
 * An ioredis client made with `keyPrefix` prefixes a script's keys but not the channels its
 * waiters listen on: latchkey refuses it at construction, naming the fix (a client without it,
 * and LockClient's own keyPrefix), which then works end to end.
 */
let server: TestServer;
before(async () => {
  server = await startServer();
});

/** Refused with a TypeError that names `keyPrefix` and the fix, before anything reaches Redis. */
function assertRefused(redis: RedisClientLike, fix: RegExp): void {
  assert.throws(
    () => new LockClient(redis),
    (error: unknown) => {
      assert.ok(error instanceof TypeError, String(error));
      assert.match(error.message, /keyPrefix.*"app:"/);
      assert.match(error.message, fix);
      assert.match(error.message, /new LockClient\(client, \{ keyPrefix: "app:latchkey:" \}\)/);
      return true;
    },
  );
}

describe('an ioredis client with keyPrefix', () => {
  it('is refused, ioredis 5 and 6, naming the fix', () => {
    for (const redis of [
      new Redis({ port: server.port, keyPrefix: 'app:', lazyConnect: true }),
      new Redis6({ port: server.port, keyPrefix: 'app:', lazyConnect: true }),
    ]) {
      assertRefused(redis, /redis\.duplicate\(\{ keyPrefix: '' \}\)/);
      assert.equal(redis.status, 'wait', 'nothing was sent');
      redis.disconnect();
    }
  });

  it('is refused as a Cluster, by its keyPrefix or its redisOptions.keyPrefix', () => {
    const nodes = [{ host: server.host, port: server.port }];
    for (const cluster of [
      new Cluster(nodes, { keyPrefix: 'app:', lazyConnect: true }),
      new Cluster(nodes, { redisOptions: { keyPrefix: 'app:' }, lazyConnect: true }),
    ]) {
      assertRefused(cluster, /a Cluster created without keyPrefix/);
      assert.equal(cluster.status, 'wait', 'nothing was sent');
      cluster.disconnect();
    }
  });

  it("works as the fix says: a duplicate without it, and LockClient's keyPrefix", async () => {
    const client = server.client({ keyPrefix: 'app:' }).duplicate({ keyPrefix: '' });
    client.on('error', () => undefined);
    const locks = new LockClient(client, { keyPrefix: 'app:latchkey:' });
    const other = new LockClient(server.client(), { keyPrefix: 'app:latchkey:' });
    after(async () => {
      await Promise.all([locks.shutdown(), other.shutdown()]);
      client.disconnect();
    });
    const admin = server.client();
    const lease = await locks.getLock('order').acquire();
    assert.equal(await admin.exists('app:latchkey:{order}:lock'), 1);
    // A waiter is handed the lock at its release, not at the end of a lease.
    const started = Date.now();
    const waiting = other.getLock('order').tryLock({ waitTime: 5_000 });
    await sleep(50);
    await lease.release();
    assert.equal(await waiting, true);
    assert.ok(Date.now() - started < 2_000, 'handed over at the release');
    await other.getLock('order').forceUnlock();
    // Loss detection by push sees the prefixed key.
    const { signal } = await locks.getLock('watched').acquire();
    await sleep(200);
    await admin.del('app:latchkey:{watched}:lock');
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('loss not told by push')), 1_000);
      signal.addEventListener('abort', () => {
        clearTimeout(timer);
        resolve();
      });
    });
  });
});
