import assert from 'node:assert/strict';
import { fork, type ChildProcess } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { Redis } from 'ioredis';
import {
  LockAcquireTimeoutError,
  LockLostError,
  LockNotHeldError,
  MemberReleaseError,
  QuorumError,
  type LockClient,
  type LockClientOptions,
} from '../../src/index.js';
import { commandCalls, startServer, type TestServer } from '../../harness/server.js';
import { sleep } from '../../harness/eventually.js';

// Short timeouts: a frozen server costs 400 ms, a crashed holder's lock lives 900 ms.
const OPTIONS: LockClientOptions = { commandTimeout: 400, watchdogTimeout: 900 };

let servers: TestServer[];
let redis: Redis[];
before(async () => {
  servers = await Promise.all([startServer(), startServer(), startServer()]);
  redis = servers.map((server) => server.client());
});

/** One LockClient per server: a party that may take the group lock. */
function party(options: LockClientOptions = OPTIONS): LockClient[] {
  return servers.map((server) => server.lockClient(options));
}

function multi(clients: LockClient[], name: string) {
  return clients[0]!.getMultiLock(...clients.map((client) => client.getLock(name)));
}

/** Per server: the member key's TTL (-2: absent). */
function ttls(name: string): Promise<number[]> {
  return Promise.all(redis.map((r) => r.pttl(`latchkey:{${name}}:lock`)));
}

const workers = new Set<ChildProcess>();
after(() => {
  for (const child of workers) child.kill('SIGKILL');
});

/** Forks the fixture worker; resolves its first IPC message. */
function forkWorker(config: object): {
  child: ChildProcess;
  message: Promise<unknown>;
  exited: Promise<number | null>;
} {
  const file = fileURLToPath(new URL('../fixtures/multi-lock-worker.ts', import.meta.url));
  const child = fork(file, [JSON.stringify(config)], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  workers.add(child);
  const message = new Promise<unknown>((resolve, reject) => {
    child.once('message', resolve);
    child.once('exit', (code) => reject(new Error(`worker exited (${code}) before reporting`)));
  });
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => (workers.delete(child), resolve(code))),
  );
  return { child, message, exited };
}

describe('MultiLock: all or nothing', () => {
  it('holds every member, excludes another party, and releases every member', async () => {
    const lock = multi(party(), 'all');
    const rival = multi(party(), 'all');
    await lock.lock();
    assert.ok((await ttls('all')).every((ttl) => ttl > 0));
    assert.equal(await lock.isHeldByCurrentOwner(), true);
    const ttl = await lock.remainTimeToLive();
    assert.ok(ttl > 0 && ttl <= 900, `ttl ${ttl}`);
    assert.equal(await rival.isLocked(), true);
    assert.equal(await rival.tryLock(), false);
    assert.equal(await rival.tryLock({ waitTime: 100 }), false);
    await lock.unlock();
    assert.deepEqual(await ttls('all'), [-2, -2, -2]);
    assert.equal(await lock.remainTimeToLive(), -2);
    assert.equal(await rival.tryLock(), true);
    await rival.unlock();
    await assert.rejects(lock.unlock(), LockNotHeldError);
  });

  it('forceUnlock deletes every member whoever holds them', async () => {
    const holder = multi(party(), 'forced');
    await holder.lock({ leaseTime: 5_000 });
    const other = multi(party(), 'forced');
    assert.equal(await other.forceUnlock(), true);
    assert.deepEqual(await ttls('forced'), [-2, -2, -2]);
    assert.equal(await other.forceUnlock(), false);
    assert.equal(await other.tryLock(), true);
    await other.unlock();
  });

  it('one member held elsewhere fails the attempt and frees the members it took', async () => {
    const other = servers[1]!.lockClient(OPTIONS).getLock('one-busy');
    await other.lock();
    const lock = multi(party(), 'one-busy');
    assert.equal(await lock.tryLock(), false);
    assert.equal(await lock.tryLock({ waitTime: 300, leaseTime: 5_000 }), false);
    const [first, , third] = await ttls('one-busy');
    assert.equal(first, -2);
    assert.equal(third, -2);
    await assert.rejects(
      lock.withLock(() => 'never', { waitTime: 200 }),
      LockAcquireTimeoutError,
    );
    assert.equal(await lock.isLocked(), false);
    await other.unlock();
  });

  it('waits for a busy member and takes the group when it is released', async () => {
    const other = servers[2]!.lockClient(OPTIONS).getLock('wait-member');
    await other.lock();
    const lock = multi(party(), 'wait-member');
    setTimeout(() => void other.unlock(), 200);
    assert.equal(await lock.tryLock({ waitTime: 5_000 }), true);
    await lock.unlock();
  });

  it('re-enters for its owner and counts holds', async () => {
    const clients = party();
    const lock = multi(clients, 'reenter');
    const count = await lock.withLock(() => lock.withLock(() => lock.getHoldCount()));
    assert.equal(count, 2);
    await clients[0]!.scope(async () => {
      assert.equal(await lock.tryLock(), true);
      assert.equal(await lock.tryLock(), true);
      assert.equal(await lock.getHoldCount(), 2);
      await lock.unlock();
      assert.equal(await lock.isLocked(), true);
      await lock.unlock();
    });
    assert.deepEqual(await ttls('reenter'), [-2, -2, -2]);
    // Outside a scope a second acquisition is another owner: it does not get the group.
    assert.equal(await lock.tryLock(), true);
    assert.equal(await lock.tryLock(), false);
    await lock.unlock();
  });
  it('inside withLock, a member taken on its own re-enters for the same owner', async () => {
    const clients = party();
    const lock = multi(clients, 'scoped');
    await lock.withLock(async () => {
      const member = clients[1]!.getLock('scoped');
      assert.equal(await member.tryLock(), true);
      assert.equal(await member.getHoldCount(), 2);
      await member.unlock();
    });
    assert.deepEqual(await ttls('scoped'), [-2, -2, -2]);
  });
});

describe('MultiLock: leases and the watchdog', () => {
  it('sets every member to the lease and lets them all expire together', async () => {
    const clients = party();
    const lock = multi(clients, 'lease');
    const lost: string[] = [];
    clients[0]!.on('lockLost', (name) => lost.push(name));
    // Taken with a temporary lease of 2 x waitTime, then set to the lease on success.
    const lease = await lock.acquire({ waitTime: 2_000, leaseTime: 500 });
    for (const ttl of await ttls('lease')) assert.ok(ttl > 0 && ttl <= 500, `ttl ${ttl}`);
    await sleep(700);
    assert.deepEqual(await ttls('lease'), [-2, -2, -2]);
    assert.ok(lease.signal.aborted);
    assert.ok(lease.signal.reason instanceof LockLostError);
    assert.deepEqual(lost, [lock.name]);
    await assert.rejects(lease.release(), LockLostError);
  });

  it("lock({ leaseTime }) waits with Redisson's randomised attempt wait and sets the lease on every member", async () => {
    const lock = multi(party(), 'lock-lease');
    for (const leaseTime of [1_000, 3_000, 7_000]) {
      await lock.lock({ leaseTime });
      for (const ttl of await ttls('lock-lease')) assert.ok(ttl > 0 && ttl <= leaseTime, `ttl ${ttl} of ${leaseTime}`);
      await lock.unlock();
    }
  });

  it('uncontended, a lease costs each member one script to take and one to give back: none to set the lease after', async () => {
    const lock = multi(party(), 'one-trip');
    // Scripts loaded and tracking links made first: they are no cost of an acquisition.
    await lock.lock({ leaseTime: 5_000 });
    await lock.unlock();
    await Promise.all(redis.map((r) => r.config('RESETSTAT')));
    for (const options of [{ leaseTime: 5_000 }, { leaseTime: 5_000, waitTime: 4_000 }]) {
      await (options.waitTime === undefined ? lock.lock(options) : lock.tryLock(options));
      for (const ttl of await ttls('one-trip')) assert.ok(ttl > 4_000 && ttl <= 5_000, `ttl ${ttl}`);
      await lock.unlock();
    }
    assert.deepEqual(await Promise.all(redis.map((r) => commandCalls(r, 'evalsha'))), [4, 4, 4]);
  });

  it('a member taken before a wait for a busy one is given a lease that outlives the wait, then the one asked for', async () => {
    const clients = party();
    const lock = multi(clients, 'outlive');
    const rival = servers[1]!.lockClient(OPTIONS).getLock('outlive');
    await rival.lock({ leaseTime: 5_000 });
    const taking = lock.tryLock({ waitTime: 3_000, leaseTime: 200 });
    // Past the asked lease of the first member while the group waits for the second.
    await sleep(400);
    const [first] = await ttls('outlive');
    assert.ok(first! > 200, `the first member kept through the wait (ttl ${first})`);
    await rival.unlock();
    assert.equal(await taking, true);
    for (const ttl of await ttls('outlive')) assert.ok(ttl > 0 && ttl <= 200, `ttl ${ttl}`);
    await lock.unlock();
  });

  it('keeps every member alive past the watchdog timeout, batched on each member client', async () => {
    const lock = multi(party(), 'watchdog');
    const lease = await lock.acquire();
    await sleep(1_500);
    for (const ttl of await ttls('watchdog')) assert.ok(ttl > 0 && ttl <= 900, `ttl ${ttl}`);
    assert.equal(lease.signal.aborted, false);
    await lease.release();
    assert.deepEqual(await ttls('watchdog'), [-2, -2, -2]);
  });

  it('losing one member marks the whole lock lost; unlock names the missing member', async () => {
    const clients = party();
    const lock = multi(clients, 'lose-one');
    const lost: string[] = [];
    clients[0]!.on('lockLost', (name) => lost.push(name));
    const lease = await lock.acquire();
    assert.equal(await servers[1]!.lockClient().getLock('lose-one').forceUnlock(), true);
    await sleep(800);
    assert.ok(lease.signal.reason instanceof LockLostError);
    assert.deepEqual(lost, [lock.name]);
    // The work it guarded was not protected: unlock says it was lost, and gives back the rest.
    await assert.rejects(lease.release(), LockLostError);
    assert.deepEqual(await ttls('lose-one'), [-2, -2, -2]);
  });
  it('a lost lock taken again starts afresh: nothing of the lost one is left or counted', async () => {
    const lock = multi(party(), 'retake');
    await lock.lock();
    await servers[0]!.lockClient().getLock('retake').forceUnlock();
    await sleep(800);
    // The members it still held are no longer renewed; unlock gives them back at once.
    await assert.rejects(lock.unlock(), LockLostError);
    assert.equal(await lock.tryLock(), true);
    assert.equal(await lock.getHoldCount(), 1);
    assert.deepEqual(await Promise.all(redis.map((r) => r.hlen('latchkey:{retake}:lock'))), [1, 1, 1]);
    await lock.unlock();
    assert.deepEqual(await ttls('retake'), [-2, -2, -2]);
  });
});

describe('MultiLock: unlock, abort and outages', () => {
  it('unlock releases the reachable members and reports the one that did not answer', async () => {
    const lock = multi(party(), 'frozen-unlock');
    await lock.lock({ leaseTime: 1_500 });
    servers[2]!.freeze();
    try {
      await assert.rejects(lock.unlock(), (error: unknown) => {
        assert.ok(error instanceof MemberReleaseError);
        assert.deepEqual(
          error.failures.map((f) => [f.index, f.reason]),
          [[2, 'timeout']],
        );
        return true;
      });
    } finally {
      servers[2]!.resume();
    }
    assert.deepEqual(await ttls('frozen-unlock'), [-2, -2, -2]); // the queued release ran on resume
    await assert.rejects(lock.unlock(), LockNotHeldError);
  });

  it('a RedLock member granted after its client shut down is no unhandled rejection', async () => {
    // The attempt holds its majority without the frozen member; the group is released and the
    // clients shut down before that member's grant arrives, so there is nobody left to give it to.
    const clients = party();
    const lock = clients[0]!.getRedLock(...clients.map((client) => client.getLock('late-after-shutdown')));
    const unhandled: unknown[] = [];
    const record = (reason: unknown): number => unhandled.push(reason);
    process.on('unhandledRejection', record);
    servers[2]!.freeze();
    try {
      assert.equal(await lock.tryLock(), true);
      await lock.unlock();
      await Promise.all(clients.map((client) => client.shutdown()));
    } finally {
      servers[2]!.resume();
    }
    try {
      // The late grant arrives at once on resume; nothing of the shut-down client keeps it alive,
      // so its lease (900 ms) lapses.
      await sleep(1_300);
    } finally {
      process.off('unhandledRejection', record);
    }
    assert.deepEqual(unhandled.map(String), []);
    assert.deepEqual(await ttls('late-after-shutdown'), [-2, -2, -2]);
  });

  it('an unreachable member fails the attempt with QuorumError and leaves nothing held', async () => {
    const lock = multi(party(), 'frozen-lock');
    servers[0]!.freeze();
    try {
      await assert.rejects(lock.tryLock(), (error: unknown) => {
        assert.ok(error instanceof QuorumError);
        assert.deepEqual(
          error.failures.map((f) => [f.name, f.reason]),
          [['frozen-lock', 'timeout']],
        );
        return true;
      });
    } finally {
      servers[0]!.resume();
    }
    await sleep(50);
    assert.deepEqual(await ttls('frozen-lock'), [-2, -2, -2]);
  });

  it('aborting while waiting rejects with the reason and leaves no member held', async () => {
    const other = servers[1]!.lockClient(OPTIONS).getLock('abort');
    await other.lock();
    const lock = multi(party(), 'abort');
    const reason = new Error('stop');
    const controller = new AbortController();
    setTimeout(() => controller.abort(reason), 150);
    await assert.rejects(lock.lock({ signal: controller.signal }), (error) => error === reason);
    const [first, , third] = await ttls('abort');
    assert.deepEqual([first, third], [-2, -2]);
    await other.unlock();
    assert.equal(await lock.isLocked(), false);
  });
});

describe('MultiLock: processes', () => {
  it("a crashed holder's members all expire", async () => {
    const ports = servers.map((server) => server.port);
    const worker = forkWorker({ mode: 'hold', kind: 'MultiLock', ports, name: 'crash', watchdogTimeout: 600 });
    assert.deepEqual(await worker.message, { held: true });
    assert.ok((await ttls('crash')).every((ttl) => ttl > 0));
    worker.child.kill('SIGKILL');
    await worker.exited;
    await sleep(800);
    assert.deepEqual(await ttls('crash'), [-2, -2, -2]);
  });

  it('two processes contending for one MultiLock never overlap and both finish', async () => {
    const ports = servers.map((server) => server.port);
    const config = { mode: 'contend', kind: 'MultiLock', ports, name: 'contend', iterations: 15, holdMs: 3 };
    const runs = [forkWorker(config), forkWorker(config)];
    const reports = (await Promise.all(runs.map((run) => run.message))) as {
      acquisitions: number;
      overlaps: number;
      intervals: [number, number][];
    }[];
    await Promise.all(runs.map((run) => run.exited));
    for (const report of reports) {
      assert.equal(report.acquisitions, 15);
      assert.equal(report.overlaps, 0);
    }
    const intervals = reports.flatMap((report) => report.intervals).sort((a, b) => a[0] - b[0]);
    for (let i = 1; i < intervals.length; i++)
      assert.ok(intervals[i]![0] >= intervals[i - 1]![1], 'critical sections overlap');
    assert.deepEqual(await ttls('contend'), [-2, -2, -2]);
  });
});

describe('MultiLock: bad input', () => {
  it('refuses bad members and options before sending anything', async () => {
    const clients = party();
    const [a, b] = [clients[0]!.getLock('bad'), clients[1]!.getLock('bad')];
    await redis[0]!.config('RESETSTAT');
    assert.throws(() => clients[0]!.getMultiLock(), RangeError);
    assert.throws(() => clients[0]!.getRedLock(), RangeError);
    assert.throws(() => clients[0]!.getMultiLock(a, {} as never), /locks\[1\].*Lock from a LockClient/);
    assert.throws(() => clients[0]!.getMultiLock(null as never), TypeError);
    assert.throws(() => clients[0]!.getMultiLock([a, b] as never), /spread it/);
    assert.throws(() => clients[0]!.getMultiLock(a, a), /locks\[1\]` is the same lock as `locks\[0\]/);
    assert.throws(() => clients[0]!.getMultiLock(a, clients[0]!.getLock('bad')), RangeError);
    const group = clients[0]!.getMultiLock(a, b);
    assert.throws(() => clients[0]!.getRedLock(group, a), /cannot be a member/);
    await assert.rejects(group.tryLock({ leaseTime: -1 }), RangeError);
    await assert.rejects(group.tryLock({ waitTime: Number.NaN }), RangeError);
    await assert.rejects(group.lock({ signal: 'no' as never }), TypeError);
    await assert.rejects(group.withLock('no' as never), TypeError);
    assert.equal(await commandCalls(redis[0]!, 'evalsha'), 0);
    assert.equal(await commandCalls(redis[0]!, 'eval'), 0);
  });
});
