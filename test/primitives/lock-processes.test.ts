import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { assertNoKeyWithoutTtl } from '../helpers/leftovers.js';
import { collectOutput, runFixture, waitForLine } from '../helpers/processes.js';
import { startServer, type TestServer } from '../helpers/redis.js';

let server: TestServer;
before(async () => {
  server = await startServer();
});

describe('Lock across OS processes', () => {
  it('two processes taking turns never hold the lock at once', async () => {
    const runs = [1, 2].map(() => collectOutput(runFixture('lock-worker.ts', ['loop', String(server.port), 'shared', '40'])));
    const results = (await Promise.all(runs)).map((output) => JSON.parse(output) as { acquisitions: number; overlaps: number });
    for (const result of results) {
      assert.equal(result.acquisitions, 40);
      assert.equal(result.overlaps, 0);
    }
    assert.equal(await server.client().exists('latchkey:{shared}:lock'), 0);
  });

  it('a crashed holder (killed, no unlock) frees the lock within one watchdog timeout', async () => {
    const watchdogTimeout = 1_500;
    const holder = runFixture('lock-worker.ts', ['hold', String(server.port), 'crash', String(watchdogTimeout)]);
    await waitForLine(holder, 'acquired');
    const lock = server.lockClient().getLock('crash');
    assert.equal(await lock.tryLock(), false);
    holder.kill('SIGKILL');
    const killedAt = Date.now();
    // Still held right after the crash: nobody deleted it, it must expire.
    assert.equal(await lock.isLocked(), true);
    await lock.lock();
    const waited = Date.now() - killedAt;
    assert.ok(waited <= watchdogTimeout + 1_000, `acquired ${waited} ms after the crash`);
    await lock.unlock();
  });
});

describe('after these tests', () => {
  it('no latchkey key is left without a TTL', async () => {
    await assertNoKeyWithoutTtl(server.client());
  });
});
