/**
 * An abort that comes while an attempt is in flight (its reply held up: a frozen server, a slow
 * link) is the caller's answer at once; what that attempt may win is given back once its reply
 * comes, so nothing is left held. Before, the caller heard the abort only when the attempt
 * settled: up to commandTimeout (10 s) behind a frozen server.
 */
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import type { LockClient } from '../../src/index.js';
import { eventually, sleep } from '../../harness/eventually.js';
import { startServer, type TestServer } from '../../harness/server.js';
import { lockOwners, outcome, proxiedLockClient, show, startProxy, within } from './helpers.js';

let server: TestServer;
before(async () => {
  server = await startServer();
});

/**
 * Starts `wait(signal)` on a client whose command connection's replies are held, aborts it
 * 200 ms later, and checks that it rejects with the abort's reason within 1 s. Then lets the
 * replies flow and returns the client.
 */
async function abortInFlight(
  name: string,
  wait: (locks: LockClient, signal: AbortSignal) => Promise<unknown>,
  won: () => Promise<boolean>,
): Promise<LockClient> {
  const proxy = await startProxy(server);
  const { locks, commandConnection } = await proxiedLockClient(server, proxy, { commandTimeout: 10_000 });
  const controller = new AbortController();
  proxy.stall('down', commandConnection); // Redis runs the attempt; its reply waits here
  const waiting = outcome(wait(locks, controller.signal));
  await sleep(200);
  assert.ok(await won(), 'the attempt has not taken anything in Redis yet');
  const reason = new Error(`${name}: the caller gave up`);
  controller.abort(reason);
  const result = await within(waiting, 1_000, undefined);
  proxy.resume('down', commandConnection);
  assert.ok(result !== undefined, 'the wait was still pending 1 s after the abort');
  assert.ok(!result.ok && result.error === reason, `the wait ended with ${show(result)}`);
  return locks;
}

describe('an abort while an attempt is in flight', { timeout: 30_000 }, () => {
  const kinds = [
    { kind: 'Lock', name: 'in-flight-lock', get: (client: LockClient) => client.getLock('in-flight-lock') },
    // Two calls per attempt: taking the lock, then its token.
    {
      kind: 'FencedLock',
      name: 'in-flight-fenced',
      get: (client: LockClient) => client.getFencedLock('in-flight-fenced'),
    },
  ];
  for (const { kind, name, get } of kinds) {
    it(`${kind}: the caller hears it at once; the lock the attempt took is given back`, async () => {
      const admin = server.client();
      const warm = get(server.lockClient()); // the scripts are loaded: no NOSCRIPT round
      await warm.lock();
      await warm.unlock();
      const locks = await abortInFlight(
        name,
        (client, signal) => get(client).lock({ signal }),
        async () => (await lockOwners(admin, name)).size === 1,
      );
      try {
        await eventually(async () => (await lockOwners(admin, name)).size === 0, 3_000);
        assert.equal(await get(server.lockClient()).tryLock(), true);
      } finally {
        await locks.shutdown();
      }
    });
  }

  it('Semaphore: the caller hears it at once; the permit the attempt took is returned', async () => {
    const semaphore = server.lockClient().getSemaphore('in-flight-permits');
    await semaphore.trySetPermits(1);
    await semaphore.acquire();
    await semaphore.release();
    const locks = await abortInFlight(
      'in-flight-permits',
      (client, signal) => client.getSemaphore('in-flight-permits').acquire(1, { signal }),
      async () => (await semaphore.availablePermits()) === 0,
    );
    try {
      await eventually(async () => (await semaphore.availablePermits()) === 1, 3_000);
    } finally {
      await locks.shutdown();
    }
  });
});
