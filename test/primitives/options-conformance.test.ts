/**
 * Every primitive under every option that applies to it: `waitTime`, `signal` (aborted before and
 * during a wait), `leaseTime`, `shutdown()` during a wait and `replicaAcks`. Each primitive is
 * described once (how to make it busy, how to take it); every option is checked the same way for
 * all of them, so that no primitive can quietly drop one.
 */
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { LockClient, RedisUnavailableError, ShutDownError, type Lock } from '../../src/index.js';
import { eventually } from '../../harness/eventually.js';
import { startServer, type TestServer } from '../../harness/server.js';

interface TakeOptions {
  readonly waitTime?: number;
  readonly leaseTime?: number;
  readonly signal?: AbortSignal;
}

/** One acquisition: whether it was granted, and how to give it back. */
interface Taken {
  readonly acquired: boolean;
  release(): Promise<void>;
}

interface Subject {
  readonly label: string;
  /** Takes `leaseTime` (an acquisition that expires by itself). */
  readonly leases: boolean;
  /** Grants something that replicas must acknowledge under `replicaAcks`. */
  readonly grants: boolean;
  /** Sets the resource up (permits, ...) before use. */
  prepare?(locks: LockClient, name: string): Promise<void>;
  /** Makes `name` unavailable to others (held by `holder`); resolves with what frees it. */
  occupy(holder: LockClient, name: string): Promise<() => Promise<void>>;
  take(locks: LockClient, name: string, options: TakeOptions): Promise<Taken>;
  /** One attempt that a holder of the resource excludes (a writer for a reader); default `take`. */
  probe?(locks: LockClient, name: string): Promise<Taken>;
}

const none = (): Promise<void> => Promise.resolve();

/** A lock subject: `get` makes the lock, `blocker` the lock that makes it busy (a writer for a reader). */
function lockSubject(label: string, get: (locks: LockClient, name: string) => Lock, blocker = get): Subject {
  return {
    label,
    leases: true,
    grants: true,
    async occupy(holder, name) {
      const lock = blocker(holder, name);
      await lock.lock();
      return () => lock.unlock();
    },
    take: (locks, name, options) => tryLock(get(locks, name), options),
    probe: (locks, name) => tryLock(blocker(locks, name), {}),
  };
}

async function tryLock(lock: Lock, options: TakeOptions): Promise<Taken> {
  const acquired = await lock.tryLock(options);
  return { acquired, release: () => (acquired ? lock.unlock() : none()) };
}

const members = (locks: LockClient, name: string, count: number): Lock[] =>
  Array.from({ length: count }, (_, i) => locks.getLock(`${name}-${i}`));

const subjects: Subject[] = [
  lockSubject('Lock', (locks, name) => locks.getLock(name)),
  lockSubject('FairLock', (locks, name) => locks.getFairLock(name)),
  lockSubject('SpinLock', (locks, name) => locks.getSpinLock(name)),
  lockSubject('FencedLock', (locks, name) => locks.getFencedLock(name)),
  lockSubject(
    'ReadWriteLock read',
    (locks, name) => locks.getReadWriteLock(name).readLock(),
    (locks, name) => locks.getReadWriteLock(name).writeLock(),
  ),
  lockSubject('ReadWriteLock write', (locks, name) => locks.getReadWriteLock(name).writeLock()),
  lockSubject('MultiLock', (locks, name) => locks.getMultiLock(...members(locks, name, 3))),
  lockSubject('RedLock', (locks, name) => locks.getRedLock(...members(locks, name, 3))),
  {
    label: 'Semaphore',
    leases: false,
    grants: true,
    prepare: async (locks, name) => void (await locks.getSemaphore(name).trySetPermits(1)),
    async occupy(holder, name) {
      await holder.getSemaphore(name).acquire();
      return () => holder.getSemaphore(name).release();
    },
    async take(locks, name, options) {
      const semaphore = locks.getSemaphore(name);
      const { waitTime, signal } = options;
      const acquired = await semaphore.tryAcquire({ waitTime, signal });
      return { acquired, release: () => (acquired ? semaphore.release() : none()) };
    },
  },
  {
    label: 'PermitExpirableSemaphore',
    leases: true,
    grants: true,
    prepare: async (locks, name) => void (await locks.getPermitExpirableSemaphore(name).trySetPermits(1)),
    async occupy(holder, name) {
      const id = await holder.getPermitExpirableSemaphore(name).acquire();
      return () => holder.getPermitExpirableSemaphore(name).release(id);
    },
    async take(locks, name, options) {
      const semaphore = locks.getPermitExpirableSemaphore(name);
      const id = await semaphore.tryAcquire(options);
      return { acquired: id !== null, release: () => (id === null ? none() : semaphore.release(id)) };
    },
  },
  {
    label: 'CountDownLatch',
    leases: false,
    grants: false,
    async occupy(holder, name) {
      await holder.getCountDownLatch(name).trySetCount(1);
      return () => holder.getCountDownLatch(name).countDown();
    },
    async take(locks, name, options) {
      const { waitTime, signal } = options;
      return { acquired: await locks.getCountDownLatch(name).await({ waitTime, signal }), release: none };
    },
  },
];

let server: TestServer;
let primary: TestServer;
before(async () => {
  // `primary` has a replica, `server` none.
  [server, primary] = await Promise.all([startServer(), startServer()]);
  const replica = await startServer(['--replicaof', primary.host, String(primary.port)]);
  const admin = replica.client();
  await eventually(async () => (await admin.info('replication')).includes('master_link_status:up'), 10_000, 'sync');
});

let unique = 0;

/** A fresh resource of `subject`, prepared, with a client to use it and one that makes it busy. */
async function fixture(subject: Subject, on = server, options?: ConstructorParameters<typeof LockClient>[1]) {
  const name = `options-${subject.label.replace(/\W+/g, '-')}-${++unique}`;
  const locks = on.lockClient(options);
  const holder = on.lockClient();
  const third = on.lockClient();
  await subject.prepare?.(holder, name);
  return { name, locks, holder, third };
}

/** `subject` can be taken at once by a client of its own: nothing is held or queued for it. */
async function takenAtOnce(subject: Subject, locks: LockClient, name: string): Promise<void> {
  const taken = await subject.take(locks, name, {});
  assert.equal(taken.acquired, true, 'something was left holding or waiting for it');
  await taken.release();
}

/** Rejects if `promise` is still pending after `ms`; else settles like it. */
function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: still pending after ${ms} ms`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

for (const subject of subjects) {
  describe(`${subject.label} honours every option`, { concurrency: true }, () => {
    it('waitTime: gives up after it while busy; acquires within it once freed', async () => {
      const { name, locks, holder } = await fixture(subject);
      const free = await subject.occupy(holder, name);
      const started = Date.now();
      const refused = await subject.take(locks, name, { waitTime: 300 });
      const waited = Date.now() - started;
      assert.equal(refused.acquired, false);
      assert.ok(waited >= 250, `gave up after ${waited} ms, before its waitTime of 300 ms`);
      const waiting = subject.take(locks, name, { waitTime: 10_000 });
      await sleep(100);
      await free();
      const taken = await within(waiting, 5_000, 'the wait after the resource was freed');
      assert.equal(taken.acquired, true);
      await taken.release();
    });

    it('signal aborted before the call: rejects with its reason, takes nothing', async () => {
      const { name, locks, third } = await fixture(subject);
      const reason = new Error('aborted before');
      await assert.rejects(
        subject.take(locks, name, { waitTime: 1_000, signal: AbortSignal.abort(reason) }),
        (error) => {
          assert.equal(error, reason);
          return true;
        },
      );
      if (subject.grants) await takenAtOnce(subject, third, name);
    });

    it('signal aborted during a wait: rejects with its reason at once, leaves nothing held or queued', async () => {
      const { name, locks, holder, third } = await fixture(subject);
      const free = await subject.occupy(holder, name);
      const controller = new AbortController();
      const waiting = subject.take(locks, name, { waitTime: 30_000, signal: controller.signal });
      await sleep(150);
      const reason = new Error('aborted while waiting');
      controller.abort(reason);
      await assert.rejects(within(waiting, 2_000, 'the aborted wait'), (error) => {
        assert.equal(error, reason);
        return true;
      });
      await free();
      if (subject.grants) await takenAtOnce(subject, third, name);
    });

    it('shutdown() during a wait: the wait rejects with ShutDownError, leaves nothing held or queued', async () => {
      const { name, locks, holder, third } = await fixture(subject);
      const free = await subject.occupy(holder, name);
      const waiting = subject.take(locks, name, { waitTime: 30_000 });
      await sleep(150);
      await locks.shutdown();
      await assert.rejects(within(waiting, 2_000, 'the wait of a client shut down'), ShutDownError);
      await free();
      if (subject.grants) await takenAtOnce(subject, third, name);
    });

    if (subject.leases) {
      it('leaseTime: the acquisition expires by itself once its lease ran out', async () => {
        const { name, locks, third } = await fixture(subject);
        // A waitTime: a group's one attempt under a loaded machine may prove less than its lease.
        const taken = await subject.take(locks, name, { leaseTime: 300, waitTime: 3_000 });
        assert.equal(taken.acquired, true);
        const probe = (locks: LockClient, name: string): Promise<Taken> =>
          subject.probe ? subject.probe(locks, name) : subject.take(locks, name, {});
        assert.equal((await probe(third, name)).acquired, false, 'taken while the lease runs');
        await eventually(
          async () => {
            const after = await probe(third, name);
            if (after.acquired) await after.release();
            return after.acquired;
          },
          5_000,
          'the resource free after the lease',
        );
      });
    }

    if (subject.grants) {
      it('replicaAcks: granted once a replica acknowledged; without one, unavailable and nothing kept', async () => {
        const acked = await fixture(subject, primary, { replicaAcks: 1 });
        const taken = await subject.take(acked.locks, acked.name, {});
        assert.equal(taken.acquired, true);
        await taken.release();
        const options = { replicaAcks: 1, replicaAckTimeout: 50, commandTimeout: 300 };
        const { name, locks, third } = await fixture(subject, server, options);
        await assert.rejects(subject.take(locks, name, {}), RedisUnavailableError);
        await takenAtOnce(subject, third, name);
      });
    } else {
      it('replicaAcks: a wait that grants nothing asks no replica', async () => {
        const { name, locks } = await fixture(subject, server, { replicaAcks: 1, commandTimeout: 300 });
        assert.equal((await subject.take(locks, name, {})).acquired, true);
      });
    }
  });
}
