/**
 * A failure is never reported as "busy" (docs/guarantees.md, 3.10). Against a server that does not answer (stopped
 * with SIGSTOP), the try-variants reject with RedisUnavailableError, as lock() does, instead of
 * resolving false / null: false and null mean "held by someone else", and nobody said so. That
 * holds for one attempt and for a wait during which Redis never answered, whether the wait is
 * longer than commandTimeout (several calls, all failing) or shorter (no call answers before the
 * deadline).
 */
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { RedisUnavailableError, type Lock, type LockClient } from '../../src/index.js';
import { startServer, type TestServer } from '../../harness/server.js';
import { outcome, show, within } from './helpers.js';

const COMMAND_TIMEOUT_MS = 200;
const LONG_WAIT_MS = 600;
const SHORT_WAIT_MS = 300;

let server: TestServer;
/** commandTimeout 200 ms. */
let quick: LockClient;
/** The default commandTimeout, 10 s. */
let patient: LockClient;
before(async () => {
  server = await startServer();
  quick = server.lockClient({ commandTimeout: COMMAND_TIMEOUT_MS });
  patient = server.lockClient();
});

interface Variant {
  readonly how: string;
  readonly client: () => LockClient;
  readonly waitTime: number | undefined;
}

/** One attempt; a wait longer than commandTimeout; a wait shorter than commandTimeout. */
const variants: readonly Variant[] = [
  { how: 'one attempt', client: () => quick, waitTime: undefined },
  {
    how: `waitTime ${LONG_WAIT_MS}, commandTimeout ${COMMAND_TIMEOUT_MS}`,
    client: () => quick,
    waitTime: LONG_WAIT_MS,
  },
  { how: `waitTime ${SHORT_WAIT_MS}, commandTimeout 10 s`, client: () => patient, waitTime: SHORT_WAIT_MS },
];

interface Case {
  readonly label: string;
  /** With the server up: loads the scripts and opens the connection the call uses. */
  readonly warmUp: () => Promise<unknown>;
  readonly call: () => Promise<unknown>;
}

type GetLock = (locks: LockClient, name: string) => Lock;

const lockKinds: readonly [string, GetLock][] = [
  ['Lock', (locks, name) => locks.getLock(name)],
  ['FairLock', (locks, name) => locks.getFairLock(name)],
  ['SpinLock', (locks, name) => locks.getSpinLock(name)],
  ['FencedLock', (locks, name) => locks.getFencedLock(name)],
  ['ReadLock', (locks, name) => locks.getReadWriteLock(name).readLock()],
  ['WriteLock', (locks, name) => locks.getReadWriteLock(name).writeLock()],
];

/** Every call reaches its client only when it runs (the clients are made in `before`). */
const cases: Case[] = variants.flatMap(({ how, client, waitTime }, v): Case[] => [
  ...lockKinds.map(([kind, get]): Case => ({
    label: `${kind}.tryLock() (${how})`,
    warmUp: async () => {
      const lock = get(client(), `${kind}-${v}`);
      assert.equal(await lock.tryLock(), true);
      await lock.unlock();
    },
    call: () => get(client(), `${kind}-${v}`).tryLock({ waitTime }),
  })),
  {
    label: `FencedLock.tryLockAndGetToken() (${how})`,
    warmUp: async () => {
      const lock = client().getFencedLock(`token-${v}`);
      assert.notEqual(await lock.tryLockAndGetToken(), null);
      await lock.unlock();
    },
    call: () => client().getFencedLock(`token-${v}`).tryLockAndGetToken({ waitTime }),
  },
  {
    label: `Semaphore.tryAcquire() (${how})`,
    warmUp: async () => {
      const semaphore = client().getSemaphore(`semaphore-${v}`);
      await semaphore.trySetPermits(1);
      assert.equal(await semaphore.tryAcquire(), true);
      await semaphore.release();
    },
    call: () => client().getSemaphore(`semaphore-${v}`).tryAcquire({ waitTime }),
  },
  {
    label: `PermitExpirableSemaphore.tryAcquire() (${how})`,
    warmUp: async () => {
      const semaphore = client().getPermitExpirableSemaphore(`expirable-${v}`);
      await semaphore.trySetPermits(1);
      const id = await semaphore.tryAcquire();
      assert.ok(id !== null);
      await semaphore.release(id);
    },
    call: () => client().getPermitExpirableSemaphore(`expirable-${v}`).tryAcquire({ waitTime }),
  },
]);

describe('try-variants against an unreachable Redis reject', { timeout: 28_000 }, () => {
  for (const { label, warmUp, call } of cases) {
    it(`${label} rejects with RedisUnavailableError`, async () => {
      await warmUp();
      server.freeze();
      let result: Awaited<ReturnType<typeof outcome>> | undefined;
      try {
        // Bounded: a call that hangs on the stopped server is a failure of its own.
        result = await within(outcome(call()), LONG_WAIT_MS + COMMAND_TIMEOUT_MS + 2_000, undefined);
      } finally {
        server.resume();
      }
      assert.ok(result !== undefined, `${label} did not settle while Redis was unreachable`);
      assert.ok(
        !result.ok && result.error instanceof RedisUnavailableError,
        `${label} ${result.ok ? `resolved ${show(result.value)}` : `rejected with ${show(result.error)}`} ` +
          'while Redis was unreachable',
      );
    });
  }
});
