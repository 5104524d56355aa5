import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { LockClient, type Lock } from '../src/index.js';
import { commandCalls, startServer, type TestServer } from '../harness/server.js';

let server: TestServer;
before(async () => {
  server = await startServer();
});

/** Asserts `call` rejects (or throws) with `type` and a message naming `argument`, and nothing reached Redis. */
async function refused(
  call: () => unknown,
  type: typeof TypeError | typeof RangeError,
  argument: string,
): Promise<void> {
  const admin = server.client();
  await admin.config('RESETSTAT');
  await assert.rejects(
    () => Promise.resolve().then(call),
    (error: unknown) => {
      assert.ok(error instanceof type, `expected ${type.name}, got ${String(error)}`);
      assert.match(error.message, new RegExp(`\`${argument}\``));
      return true;
    },
  );
  const calls = (await commandCalls(admin, 'evalsha')) + (await commandCalls(admin, 'eval'));
  assert.equal(calls, 0, 'no script reached Redis');
}

describe('bad input is refused before Redis, naming the argument', () => {
  let lock: Lock;
  before(() => {
    lock = server.lockClient().getLock('valid');
  });

  it('LockClient options', async () => {
    const redis = server.client();
    await refused(() => new LockClient(redis, { keyPrefix: '' }), RangeError, 'keyPrefix');
    await refused(() => new LockClient(redis, { keyPrefix: 5 as unknown as string }), TypeError, 'keyPrefix');
    await refused(() => new LockClient(redis, { watchdogTimeout: -1 }), RangeError, 'watchdogTimeout');
    await refused(() => new LockClient(redis, { watchdogTimeout: 0 }), RangeError, 'watchdogTimeout');
    await refused(() => new LockClient(redis, { maxLeaseTime: Number.NaN }), RangeError, 'maxLeaseTime');
    await refused(() => new LockClient(redis, { commandTimeout: Infinity }), RangeError, 'commandTimeout');
    await refused(() => new LockClient(redis, { replicaAcks: -1 }), RangeError, 'replicaAcks');
    await refused(() => new LockClient(redis, { replicaAcks: 1.5 }), RangeError, 'replicaAcks');
    await refused(() => new LockClient(redis, { replicaAckTimeout: 0 }), RangeError, 'replicaAckTimeout');
    // A misspelled option is refused, not ignored.
    await refused(() => new LockClient(redis, { replicaAck: 1 } as never), TypeError, 'options.replicaAck');
    await refused(() => new LockClient(redis, 'fast' as never), TypeError, 'options');
    await refused(() => new LockClient({} as never), TypeError, 'redis');
  });

  it('lock names', async () => {
    const locks = server.lockClient();
    await refused(() => locks.getLock(''), RangeError, 'name');
    await refused(() => locks.getLock(42 as unknown as string), TypeError, 'name');
    await refused(() => locks.getLock(undefined as unknown as string), TypeError, 'name');
  });

  it('durations, signals and callbacks', async () => {
    await refused(() => lock.lock({ leaseTime: -5 }), RangeError, 'leaseTime');
    await refused(() => lock.lock({ leaseTime: 0 }), RangeError, 'leaseTime');
    await refused(() => lock.lock({ leaseTime: Infinity }), RangeError, 'leaseTime');
    await refused(() => lock.lock({ leaseTime: '100' as unknown as number }), TypeError, 'leaseTime');
    await refused(() => lock.tryLock({ waitTime: Number.NaN }), RangeError, 'waitTime');
    await refused(() => lock.tryLock({ waitTime: -1 }), RangeError, 'waitTime');
    await refused(() => lock.tryLock({ signal: {} as AbortSignal }), TypeError, 'signal');
    await refused(() => lock.tryLock(7 as never), TypeError, 'options');
    await refused(() => lock.withLock('run' as never), TypeError, 'fn');
    await refused(() => lock.withLock(() => 1, { waitTime: -1 }), RangeError, 'waitTime');
    await refused(() => lock.acquire({ leaseTime: -1 }), RangeError, 'leaseTime');
    await refused(() => server.lockClient().scope(null as never), TypeError, 'fn');
  });
});
