/**
 * A command Redis ran whose reply was lost is sent again (ioredis re-sends in-flight commands after
 * a reconnect, at its defaults), so a script runs twice. docs/guarantees.md, 3.2 Retries are harmless: every
 * state-changing script gives the first run's outcome on a repeat.
 *
 * The proxy forwards the command, swallows Redis' reply and cuts the connection; ioredis
 * reconnects and sends the command again. Commands are picked by the key names they carry (the
 * `{name}` hash tag and the primitive's key), never by a script's SHA.
 */
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import type { Redis } from 'ioredis';
import type { TcpProxy } from '../../harness/tcp-proxy.js';
import { LockClient, LockNotHeldError } from '../../src/index.js';
import { sleep } from '../../harness/eventually.js';
import { startServer, type TestServer } from '../../harness/server.js';
import { carries, lockOwners, outcome, proxiedLockClient, show, startProxy } from './helpers.js';

let server: TestServer;
let proxy: TcpProxy;
before(async () => {
  server = await startServer();
  proxy = await startProxy(server);
});

type Loss = <T>(fragment: string, call: () => Promise<T>) => Promise<T>;

/** Runs `call` with the reply to the first command naming `fragment` lost after Redis ran it. */
const replyLost: Loss = async (fragment, call) => {
  const dropped = proxy.dropNextReply(carries(fragment));
  const result = await call();
  await dropped;
  return result;
};

/** Runs `call` untouched. */
const noLoss: Loss = (_fragment, call) => call();

/**
 * Runs `scenario` once without a fault on a name of its own, then with the reply lost. The first
 * run loads every script it uses into Redis: otherwise the lost reply could be a NOSCRIPT, and the
 * script would run once only (after the reconnect, as EVAL).
 */
async function lostReply(name: string, scenario: (name: string, loss: Loss) => Promise<void>): Promise<void> {
  await scenario(`${name}-warm-up`, noLoss);
  await scenario(name, replyLost);
}

/** The hold counts of every owner of lock `name` in Redis, comma-separated. */
async function holdCounts(admin: Redis, name: string): Promise<string> {
  return [...(await lockOwners(admin, name)).values()].join(',');
}

async function client(options?: ConstructorParameters<typeof LockClient>[1]): Promise<LockClient> {
  return (await proxiedLockClient(server, proxy, options)).locks;
}

describe('replies lost after Redis ran the command', { timeout: 25_000 }, () => {
  it('a re-entrant unlock() (2 holds in a scope) whose reply was lost leaves exactly 1 hold', async () => {
    const locks = await client();
    const admin = server.client();
    await lostReply('lost-reentrant-unlock', async (name, loss) => {
      const lock = locks.getLock(name);
      await locks.scope(async () => {
        await lock.lock();
        await lock.lock();
        assert.equal(await lock.getHoldCount(), 2);
        await loss(`{${name}}:lock`, () => lock.unlock());
        assert.equal(await lock.getHoldCount(), 1, 'holds left after one unlock() of 2 holds');
        assert.equal(await holdCounts(admin, name), '1', 'hold counts in Redis');
        await lock.unlock();
      });
      assert.equal(await lock.isLocked(), false);
    });
  });

  it('a first lock() whose reply was lost records 1 hold; unlock() then frees the lock for good', async () => {
    const locks = await client({ watchdogTimeout: 600 });
    const admin = server.client();
    await lostReply('lost-first-lock', async (name, loss) => {
      const lock = locks.getLock(name);
      await loss(`{${name}}:lock`, () => lock.lock());
      assert.equal(await holdCounts(admin, name), '1', 'hold counts in Redis after one lock()');
      await lock.unlock();
      assert.equal(await lock.isLocked(), false, 'the lock is still held after its only unlock()');
      await sleep(900); // past watchdogTimeout: nothing may keep a stray hold alive
      assert.equal(await lock.isLocked(), false, 'the lock came back or was kept alive after unlock()');
    });
  });

  it('unlock() whose reply was lost resolves (no LockNotHeldError) and frees the lock', async () => {
    const locks = await client();
    await lostReply('lost-unlock', async (name, loss) => {
      const lock = locks.getLock(name);
      await lock.lock();
      const result = await loss(`{${name}}:lock`, () => outcome(lock.unlock()));
      assert.ok(result.ok, `unlock() rejected: ${result.ok ? '' : show(result.error)}`);
      assert.equal(await lock.isLocked(), false);
    });
  });

  it('Semaphore(2): acquire() whose reply was lost takes exactly 1 permit', async () => {
    const locks = await client();
    await lostReply('lost-sem-acquire', async (name, loss) => {
      const semaphore = locks.getSemaphore(name);
      assert.equal(await semaphore.trySetPermits(2), true);
      await loss(`{${name}}:semaphore:permits`, () => semaphore.acquire());
      assert.equal(await semaphore.availablePermits(), 1, 'permits left after one acquire() of 2');
      await semaphore.release();
      assert.equal(await semaphore.availablePermits(), 2, 'permits after acquire() and release()');
    });
  });

  it('Semaphore(2): release() whose reply was lost returns exactly 1 permit', async () => {
    const locks = await client();
    await lostReply('lost-sem-release', async (name, loss) => {
      const semaphore = locks.getSemaphore(name);
      assert.equal(await semaphore.trySetPermits(2), true);
      await semaphore.acquire();
      assert.equal(await semaphore.availablePermits(), 1);
      await loss(`{${name}}:semaphore:permits`, () => semaphore.release());
      assert.equal(await semaphore.availablePermits(), 2, 'permits after acquire() and release()');
    });
  });

  it('PermitExpirableSemaphore.release(id) whose reply was lost resolves and returns the permit', async () => {
    const locks = await client();
    await lostReply('lost-pes-release', async (name, loss) => {
      const semaphore = locks.getPermitExpirableSemaphore(name);
      assert.equal(await semaphore.trySetPermits(1), true);
      const id = await semaphore.acquire();
      assert.equal(await semaphore.availablePermits(), 0);
      const result = await loss(`{${name}}:expirable-semaphore`, () => outcome(semaphore.release(id)));
      assert.ok(
        result.ok,
        `release(id) rejected: ${result.ok ? '' : show(result.error)}` +
          (result.ok || !(result.error instanceof LockNotHeldError) ? '' : ' (the release had happened)'),
      );
      assert.equal(await semaphore.availablePermits(), 1);
    });
  });
});

describe('replies lost, second method: CLIENT KILL run after the command, before its reply is written', () => {
  it(
    'a re-entrant unlock() (2 holds in a scope) whose connection was killed after it ran leaves 1 hold',
    {
      timeout: 15_000,
    },
    async () => {
      const own = await startServer();
      const redis = own.client();
      const locks = new LockClient(redis);
      const admin = own.client();
      const blocker = own.client();
      /**
       * Redis writes replies out once per pass of its event loop, after it ran every command it read
       * and, just before that, the queued commands of clients a command unblocked. So: a BLPOP with a
       * CLIENT KILL of the lock's connection queued behind it; then, with the server stopped so that
       * both land in one read, the call and an LPUSH on the lock's own connection. Redis runs the
       * call, the LPUSH serves the BLPOP, the kill runs, and the call's reply is never written.
       */
      const killedAfterIt: Loss = async (_fragment, call) => {
        const id = String(await redis.client('ID'));
        const trigger = `kill-trigger-${id}`;
        const served = blocker.blpop(trigger, 0);
        const killing = blocker.call('CLIENT', 'KILL', 'ID', id);
        await sleep(50); // the BLPOP blocks, the kill waits behind it
        own.freeze();
        let result: ReturnType<typeof call>;
        try {
          result = call();
          await sleep(50); // the call is written before the LPUSH
          void redis.lpush(trigger, '1').catch(() => undefined);
          await sleep(50);
        } finally {
          own.resume();
        }
        await served;
        assert.equal(Number(await killing), 1, 'CLIENT KILL cut no connection');
        const value = await result;
        await admin.del(trigger); // the LPUSH is sent again after the reconnect too
        return value;
      };
      const scenario = async (name: string, loss: Loss): Promise<void> => {
        const lock = locks.getLock(name);
        await locks.scope(async () => {
          await lock.lock();
          await lock.lock();
          await loss(`{${name}}:lock`, () => lock.unlock());
          assert.equal(await lock.getHoldCount(), 1, 'holds left after one unlock() of 2 holds');
          assert.equal(await holdCounts(admin, name), '1', 'hold counts in Redis');
          await lock.unlock();
        });
        assert.equal(await lock.isLocked(), false);
      };
      try {
        await scenario('killed-reentrant-unlock-warm-up', noLoss);
        await scenario('killed-reentrant-unlock', killedAfterIt);
      } finally {
        await locks.shutdown();
      }
    },
  );
});
