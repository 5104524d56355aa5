import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import type { Redis } from 'ioredis';
import { createClient, type RedisClientType } from 'redis';
import {
  CommandRefusedError,
  LockClient,
  type LatchkeyWarning,
  type Lock,
  type LockClientOptions,
} from '../../src/index.js';
import type { RedisClientLike } from '../../src/redis/to-connection.js';
import { shutDownAfterFile } from '../../harness/cleanup.js';
import { connectNodeRedis } from '../../harness/clients.js';
import { startServer, type TestServer } from '../../harness/server.js';
import { eventually, sleep } from '../../harness/eventually.js';

/**
 * A managed service's restrictions, played by an ACL on the default user (what the clients log in
 * as): the core of every primitive must work, loss detection falls back to renewal with one
 * warning, `replicaAcks` fails with a typed error, and nothing asks again for what was refused or
 * keeps connections it cannot use. An `admin` user looks on.
 */
const RESTRICTIONS = [
  { denied: ['-client|tracking', '-client|caching'], tracking: false },
  { denied: ['-client'], tracking: false },
  { denied: ['-wait'], tracking: true },
] as const;

/** Renewal finds a loss within a third of this; short, so that a hold is renewed within a test. */
const WATCHDOG_MS = 1_500;
/** More than the 5 s after which a tracking that could not be set up is tried again. */
const REOPEN_WINDOW_MS = 5_500;

async function restrictedServer(denied: readonly string[]): Promise<{ server: TestServer; admin: Redis }> {
  const server = await startServer([
    ...['--user', 'default', 'on', 'nopass', '~*', '&*', '+@all', ...denied],
    ...['--user', 'admin', 'on', '>admin', '~*', '&*', '+@all'],
  ]);
  return { server, admin: server.client({ username: 'admin', password: 'admin' }) };
}

type ClientKind = 'ioredis' | 'node-redis';

async function redisClient(kind: ClientKind, server: TestServer): Promise<RedisClientLike> {
  if (kind === 'ioredis') return server.client();
  return connectNodeRedis(createClient({ url: server.url }) as RedisClientType);
}

/** A LockClient over a new client of `kind`, shut down after the file, and the warnings it gives. */
async function lockClient(
  kind: ClientKind,
  server: TestServer,
  options: LockClientOptions,
): Promise<{ locks: LockClient; warnings: LatchkeyWarning[] }> {
  const locks = shutDownAfterFile(new LockClient(await redisClient(kind, server), options));
  const warnings: LatchkeyWarning[] = [];
  locks.on('warning', (warning) => warnings.push(warning));
  return { locks, warnings };
}

const preparations: (() => Promise<void>)[] = [];
/**
 * What a test uses, made in the suite's `before`: all at once, before any test holds a lock. The
 * tests run concurrently, and making a client takes the event loop for a while (node-redis builds
 * its command table for each client, then the collector runs): four copies of this file run at
 * once stalled the loop for over a second while the first tests' locks were held, most of their
 * 1.5 s lease, and the watchdog rightly gave those locks up as lost.
 */
function prepared<T>(make: () => Promise<T>): () => T {
  let made: { value: T } | undefined;
  preparations.push(async () => {
    made = { value: await make() };
  });
  return () => {
    assert.ok(made, 'prepared in before()');
    return made.value;
  };
}

/** Connections of the default user (the clients'), and how often Redis refused it a command. */
async function usage(admin: Redis): Promise<{ connections: number; refused: number; refusedByCommand: string }> {
  const list = String(await admin.call('CLIENT', 'LIST'));
  const connections = list.split('\n').filter((line) => line.includes(' user=default ')).length;
  const stats = await admin.info('commandstats');
  const counts = [...stats.matchAll(/cmdstat_(\S+):.*rejected_calls=(\d+)/g)].filter(([, , n]) => n !== '0');
  const refused = counts.reduce((sum, [, , n]) => sum + Number(n), 0);
  return { connections, refused, refusedByCommand: counts.map(([, name, n]) => `${name}=${n}`).join(' ') };
}

/** `first` holds past its lease (renewed), `second` waits, gets it handed over, releases. */
async function handOver(first: Lock, second: Lock): Promise<void> {
  await first.lock();
  const waiting = second.tryLock({ waitTime: 5_000 });
  await sleep(WATCHDOG_MS * 1.5);
  assert.ok((await first.remainTimeToLive()) > 0, `${first.name} renewed past its lease`);
  await first.unlock();
  assert.equal(await waiting, true, `${second.name} handed over`);
  await second.unlock();
}

/** Acquire, wait, hand over, release and renew with every primitive, between clients `a` and `b`. */
async function everyPrimitive(a: LockClient, b: LockClient): Promise<void> {
  await Promise.all([
    handOver(a.getLock('lock'), b.getLock('lock')),
    handOver(a.getFairLock('fair'), b.getFairLock('fair')),
    handOver(a.getFencedLock('fenced'), b.getFencedLock('fenced')),
    handOver(a.getReadWriteLock('rw').writeLock(), b.getReadWriteLock('rw').readLock()).then(() =>
      handOver(a.getReadWriteLock('rw').readLock(), b.getReadWriteLock('rw').writeLock()),
    ),
    semaphore(a, b),
    expirableSemaphore(a, b),
    latch(a, b),
  ]);
}

async function semaphore(a: LockClient, b: LockClient): Promise<void> {
  const permits = a.getSemaphore('semaphore');
  assert.equal(await permits.trySetPermits(1), true);
  await permits.acquire();
  const waiting = b.getSemaphore('semaphore').tryAcquire({ waitTime: 5_000 });
  await sleep(100);
  await permits.release();
  assert.equal(await waiting, true);
  await b.getSemaphore('semaphore').release();
}

async function expirableSemaphore(a: LockClient, b: LockClient): Promise<void> {
  const permits = a.getPermitExpirableSemaphore('expirable');
  assert.equal(await permits.trySetPermits(1), true);
  const id = await permits.acquire();
  const waiting = b.getPermitExpirableSemaphore('expirable').tryAcquire({ waitTime: 5_000 });
  await sleep(100);
  await permits.release(id);
  const next = await waiting;
  assert.ok(next !== null);
  await b.getPermitExpirableSemaphore('expirable').release(next);
}

async function latch(a: LockClient, b: LockClient): Promise<void> {
  const count = a.getCountDownLatch('latch');
  assert.equal(await count.trySetCount(1), true);
  const opened = b.getCountDownLatch('latch').await({ waitTime: 5_000 });
  await sleep(100);
  await count.countDown();
  assert.equal(await opened, true);
}

/** Deletes a held lock behind its holder: its signal aborts (by push, or at the next renewal). */
async function lossFound(locks: LockClient, admin: Redis): Promise<void> {
  const { signal } = await locks.getLock('lost').acquire();
  await sleep(200);
  await admin.del('latchkey:{lost}:lock');
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('loss not found within two leases')), WATCHDOG_MS * 2);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

// Concurrently: each test waits out the time a failed tracking would take to be tried again.
describe('a server that refuses commands (managed services)', { concurrency: true }, () => {
  before(() => Promise.all(preparations.map((prepare) => prepare())));

  for (const { denied, tracking } of RESTRICTIONS) {
    for (const kind of ['ioredis', 'node-redis'] as const) {
      const setting = prepared(async () => {
        const { server, admin } = await restrictedServer(denied);
        const options = { watchdogTimeout: WATCHDOG_MS };
        const [a, b] = [await lockClient(kind, server, options), await lockClient(kind, server, options)];
        return { admin, a: a.locks, b: b.locks, warnings: () => [...a.warnings, ...b.warnings] };
      });
      it(`${denied.join(' ')}, ${kind}: every primitive works, losses are found, one warning, nothing asked again`, async () => {
        const { admin, a, b, warnings } = setting();
        await everyPrimitive(a, b);
        await lossFound(a, admin);
        const expected = tracking ? [] : ['TRACKING_UNAVAILABLE', 'TRACKING_UNAVAILABLE'];
        assert.deepEqual(
          warnings().map((warning) => warning.code),
          expected,
        );
        if (!tracking) assert.match(warnings()[0]!.message, /refused CLIENT .*lossDetection: 'renewal'/s);
        // Held and taken anew for longer than a failed tracking would wait before trying again:
        // nothing refused is asked for again, and no connection is opened.
        const settled = await usage(admin);
        const held = await a.getLock('held').acquire();
        await sleep(REOPEN_WINDOW_MS);
        await b.getLock('taken-later').withLock(() => sleep(100));
        assert.deepEqual(await usage(admin), settled, `before: ${settled.refusedByCommand}`);
        await held.release();
      });
    }
  }

  for (const kind of ['ioredis', 'node-redis'] as const) {
    const setting = prepared(async () => {
      const { server, admin } = await restrictedServer(['-wait']);
      return { admin, ...(await lockClient(kind, server, { replicaAcks: 1 })) };
    });
    it(`-wait, ${kind}: replicaAcks fails with CommandRefusedError, gives the grant back, warns once`, async () => {
      const { admin, locks, warnings } = setting();
      const attempts: [string, () => Promise<unknown>][] = [
        ['Lock', () => locks.getLock('acked').tryLock({ waitTime: 1_000 })],
        ['Semaphore', () => locks.getSemaphore('acked-permits').tryAcquire({ waitTime: 1_000 })],
      ];
      await locks.getSemaphore('acked-permits').trySetPermits(1);
      for (const [kindName, attempt] of attempts) {
        await assert.rejects(attempt(), (error: unknown) => {
          assert.ok(error instanceof CommandRefusedError, `${kindName}: ${String(error)}`);
          assert.equal(error.code, 'LATCHKEY_COMMAND_REFUSED');
          assert.equal(error.command, 'WAIT');
          assert.match(error.message, /replicaAcks/);
          return true;
        });
      }
      // Given back: nothing held, the permit back in the pool; WAIT asked once per call, never retried.
      assert.equal(await locks.getLock('acked').isLocked(), false);
      assert.equal(await locks.getSemaphore('acked-permits').availablePermits(), 1);
      assert.match((await usage(admin)).refusedByCommand, /^wait=2$/);
      assert.deepEqual(
        warnings.map((warning) => warning.code),
        ['REPLICA_ACKS_UNAVAILABLE'],
      );
    });
  }

  const trackingTakenLater = prepared(async () => {
    const { server, admin } = await restrictedServer([]);
    return { admin, ...(await lockClient('ioredis', server, { watchdogTimeout: WATCHDOG_MS })) };
  });
  it('an ACL that takes tracking away later: refused at the reconnect, one warning, renewal from then on', async () => {
    const { admin, locks, warnings } = trackingTakenLater();
    const { signal } = await locks.getLock('kept').acquire();
    await sleep(200);
    await admin.call('ACL', 'SETUSER', 'default', '-client|tracking');
    for (const line of String(await admin.call('CLIENT', 'LIST')).split('\n')) {
      const id = / name=latchkey-(?:tracking|invalidations)-/.test(line) ? /^id=(\d+)/.exec(line)?.[1] : undefined;
      if (id !== undefined) await admin.call('CLIENT', 'KILL', 'ID', id);
    }
    await eventually(() => warnings.length > 0, 5_000, 'the refusal told');
    assert.deepEqual(
      warnings.map((warning) => warning.code),
      ['TRACKING_UNAVAILABLE'],
    );
    const settled = await usage(admin);
    await sleep(REOPEN_WINDOW_MS);
    assert.deepEqual(await usage(admin), settled, `before: ${settled.refusedByCommand}`);
    assert.match(settled.refusedByCommand, /^client\|tracking=1$/);
    // Renewal finds the loss.
    await admin.del('latchkey:{kept}:lock');
    await eventually(() => signal.aborted, WATCHDOG_MS * 2, 'the loss found by renewal');
  });
});
