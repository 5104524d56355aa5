import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { eventually, startServer, type TestServer } from '../helpers/redis.js';

const main = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));
const run = promisify(execFile);
let server: TestServer;

before(async () => {
  server = await startServer();
});

function cli(...args: string[]): Promise<{ stdout: string; stderr: string }> {
  return run(process.execPath, ['--import', 'tsx', main, ...args, '--url', server.url]);
}

describe('npx latchkey inspect / unlock', () => {
  it('lists held locks with owner, hold count and TTL, and semaphore permits', async () => {
    const locks = server.lockClient();
    const order = locks.getLock('order:7');
    await order.lock();
    await order.lock();
    const semaphore = locks.getSemaphore('quota');
    await semaphore.trySetPermits(4);
    // Two other processes' clients wait for the lock.
    const controller = new AbortController();
    const waits = [server.lockClient(), server.lockClient()].map((client) =>
      client
        .getLock('order:7')
        .lock({ signal: controller.signal })
        .catch(() => undefined),
    );
    await eventually(async () => (await server.client().llen('latchkey:{order:7}:lock:queue')) === 2, 2_000, 'queued');
    const { stdout } = await cli('inspect');
    controller.abort();
    await Promise.all(waits);
    const orderLine = stdout.split('\n').find((line) => line.startsWith('order:7  lock '));
    assert.ok(orderLine, stdout);
    assert.match(orderLine, new RegExp(`${locks.id}:\\S+ x2`), 'owner and hold count');
    assert.match(orderLine, /ttl \d/);
    assert.match(orderLine, /clients waiting: 2 /);
    assert.match(stdout, /quota {2}semaphore:permits {2}string {2}no expiry .*value 4/);
    const filtered = await cli('inspect', 'order:*');
    assert.doesNotMatch(filtered.stdout, /quota/);
    await order.unlock();
    await order.unlock();
  });

  it('unlock NAME --force deletes a lock whoever holds it; without --force it refuses', async () => {
    const lock = server.lockClient().getLock('stuck');
    await lock.lock({ leaseTime: 60_000 });
    await assert.rejects(cli('unlock', 'stuck'), /--force/);
    assert.equal(await lock.isLocked(), true);
    const { stdout } = await cli('unlock', 'stuck', '--force');
    assert.match(stdout, /Unlocked "stuck"/);
    assert.equal(await lock.isLocked(), false);
    // Exit code 1 when there was nothing to unlock.
    await assert.rejects(cli('unlock', 'stuck', '--force'), (error: { stdout?: string }) =>
      /was not locked/.test(error.stdout ?? ''),
    );
  });
});
