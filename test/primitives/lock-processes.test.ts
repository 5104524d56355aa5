import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { assertNoKeyWithoutTtl } from '../../harness/keys.js';
import { startFixture, type FixtureProcess } from '../../harness/fixture-process.js';
import { startServer, type TestServer } from '../../harness/server.js';

let server: TestServer;
before(async () => {
  server = await startServer();
});

describe('Lock across OS processes', () => {
  it('two processes taking turns never hold the lock at once', async () => {
    const workers = [1, 2].map(() => startFixture('lock-worker', ['loop', server.port, 'shared', 40]));
    const finished = async (worker: FixtureProcess): Promise<{ acquisitions: number; overlaps: number }> => {
      assert.equal(await worker.exited, 0, worker.lines.join('\n'));
      return JSON.parse(worker.lines.at(-1)!) as { acquisitions: number; overlaps: number };
    };
    const results = await Promise.all(workers.map(finished));
    for (const result of results) {
      assert.equal(result.acquisitions, 40);
      assert.equal(result.overlaps, 0);
    }
    assert.equal(await server.client().exists('latchkey:{shared}:lock'), 0);
  });

  it('a crashed holder (killed, no unlock) frees the lock within one watchdog timeout', async () => {
    const watchdogTimeout = 1_500;
    const holder = startFixture('lock-worker', ['hold', server.port, 'crash', watchdogTimeout]);
    await holder.waitFor('acquired');
    const lock = server.lockClient().getLock('crash');
    assert.equal(await lock.tryLock(), false);
    holder.child.kill('SIGKILL');
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
