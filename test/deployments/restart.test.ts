import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { LockClient, LockLostError, type LockClientOptions } from '../../src/index.js';
import { shutDownAfterFile } from '../../harness/cleanup.js';
import { startRestartableServer, type RestartableServer } from '../../harness/restartable-server.js';

let server: RestartableServer;
before(async () => {
  server = await startRestartableServer();
});

const clients: Record<string, (options?: LockClientOptions) => Promise<LockClient>> = {
  ioredis: (options) => Promise.resolve(shutDownAfterFile(new LockClient(server.ioredis(), options))),
  'node-redis': async (options) => shutDownAfterFile(new LockClient(await server.nodeRedis(), options)),
};

/** Resolves with when `signal` aborted, or rejects after `ms`. */
function abortedWithin(signal: AbortSignal, ms: number): Promise<number> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return resolve(Date.now());
    const timer = setTimeout(() => reject(new Error(`the lease signal did not abort within ${ms} ms`)), ms);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve(Date.now());
    });
  });
}

describe('a standalone server killed and restarted empty', { concurrency: 1 }, () => {
  for (const [name, make] of Object.entries(clients)) {
    it(`${name}: the holder learns its lock is gone, a waiter rides out the restart and takes it`, async () => {
      const holder = await make({ watchdogTimeout: 1_500 });
      const waiter = await make({ watchdogTimeout: 1_500 });
      const lock = `restart:${name}`;
      const lease = await holder.getLock(lock).acquire();
      const next = waiter.getLock(lock);
      const waiting = next.tryLock({ waitTime: 15_000 });
      await new Promise((resolve) => setTimeout(resolve, 200));

      const restarted = Date.now();
      await server.restart();
      // Nothing of the lock survived: the holder must hear it, whether tracking's re-check on
      // reconnect or the next renewal tells it first.
      await abortedWithin(lease.signal, 5_000);
      assert.ok(lease.signal.reason instanceof LockLostError, String(lease.signal.reason));
      // The waiter's attempts fail while the server is away, then take the free lock.
      assert.equal(await waiting, true);
      assert.ok(Date.now() - restarted < 10_000, `the waiter got it ${Date.now() - restarted} ms after the restart`);
      assert.equal(await next.isHeldByCurrentOwner(), true);
      // The holder's release says the lock was lost, never that it released someone else's.
      await assert.rejects(lease.release(), LockLostError);
      assert.equal(await next.isHeldByCurrentOwner(), true, 'the new holder keeps it');
      await next.unlock();
      assert.equal(await next.isLocked(), false);
    });
  }
});
