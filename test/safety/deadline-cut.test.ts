/**
 * A wait's own time running out is not a failure of Redis. A tryLock() with a short waitTime that
 * heard the lock was held, and whose last call is still on its way when the wait's time is up (a
 * slow reply, a loaded machine), resolves false: the lock was last seen held. A wait that never
 * heard from Redis still rejects with RedisUnavailableError (see unreachable-try.test.ts).
 */
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { startServer, type TestServer } from '../../harness/server.js';
import { sleep } from '../../harness/eventually.js';
import { outcome, proxiedLockClient, show, startProxy } from './helpers.js';

let server: TestServer;
before(async () => {
  server = await startServer();
});

describe("a wait's deadline", () => {
  it('cuts a slow last call of a wait that heard the lock held: not acquired, not unavailable', async () => {
    const proxy = await startProxy(server);
    const { locks } = await proxiedLockClient(server, proxy);
    const holder = server.lockClient().getLock('deadline-cut');
    await holder.lock();
    const waiting = outcome(locks.getLock('deadline-cut').tryLock({ waitTime: 400 }));
    // Its first attempts were answered (held); from now on replies take longer than the wait has left.
    await sleep(150);
    proxy.delay('down', 1_000);
    const result = await waiting;
    proxy.delay('down', 0);
    assert.ok(result.ok && result.value === false, `tryLock: ${result.ok ? String(result.value) : show(result.error)}`);
    await holder.unlock();
  });
});
