import assert from 'node:assert/strict';
import { once } from 'node:events';
import { before, describe, it } from 'node:test';
import type { Redis } from 'ioredis';
import {
  LockClient,
  LockLostError,
  MemberReleaseError,
  QuorumError,
  RedisUnavailableError,
  type Lock,
  type LockClientOptions,
} from '../../src/index.js';
import { eventually, sleep } from '../../harness/eventually.js';
import { startServer, type TestServer } from '../../harness/server.js';

// A frozen server costs one commandTimeout per call; keep it short.
const OPTIONS: LockClientOptions = { commandTimeout: 300, watchdogTimeout: 900 };

let servers: TestServer[];
let redis: Redis[];
before(async () => {
  servers = await Promise.all(Array.from({ length: 5 }, () => startServer()));
  redis = servers.map((server) => server.client());
});

function party(on: TestServer[] = servers, options: LockClientOptions = OPTIONS): LockClient[] {
  return on.map((server) => server.lockClient(options));
}

function redLock(clients: LockClient[], name: string): Lock {
  return clients[0]!.getRedLock(...clients.map((client) => client.getLock(name)));
}

/** Which of the 5 servers hold the member key. */
async function heldOn(name: string, on: Redis[] = redis): Promise<number[]> {
  const exists = await Promise.all(on.map((r) => r.exists(`latchkey:{${name}}:lock`)));
  return exists.flatMap((e, i) => (e === 1 ? [i] : []));
}

/** Runs `fn` with servers `indexes` frozen (SIGSTOP), resuming them afterwards. */
async function frozen<T>(indexes: number[], fn: () => Promise<T>): Promise<T> {
  for (const i of indexes) servers[i]!.freeze();
  try {
    return await fn();
  } finally {
    for (const i of indexes) servers[i]!.resume();
  }
}

describe('RedLock: majority', () => {
  it('takes all five members when every server answers, and releases them all', async () => {
    const lock = redLock(party(), 'all-five');
    await lock.lock();
    // lock() returns once a majority is held; the members that answer after that join the hold.
    assert.ok((await heldOn('all-five')).length >= 3);
    await eventually(async () => (await heldOn('all-five')).length === 5, 2_000, 'all five members held');
    assert.equal(await lock.isHeldByCurrentOwner(), true);
    await lock.unlock();
    assert.deepEqual(await heldOn('all-five'), []);
  });

  it('succeeds with 2 of 5 servers frozen; the frozen members are released once they resume', async () => {
    const lock = redLock(party(), 'two-frozen');
    await frozen([3, 4], async () => {
      await lock.lock();
      assert.deepEqual(await heldOn('two-frozen', redis.slice(0, 3)), [0, 1, 2]);
      assert.equal(await lock.isHeldByCurrentOwner(), true);
      await lock.unlock();
    });
    await sleep(100);
    assert.deepEqual(await heldOn('two-frozen'), []);
  });

  it('takes the members of one attempt in parallel: three frozen servers cost one timeout, not three', async () => {
    const lock = redLock(party(servers, { ...OPTIONS, commandTimeout: 600 }), 'parallel');
    const elapsed = await frozen([1, 2, 3], async () => {
      const started = Date.now();
      await assert.rejects(lock.tryLock({ leaseTime: 10_000 }), QuorumError);
      return Date.now() - started;
    });
    // One after the other would take at least 3 x 600 ms.
    assert.ok(elapsed < 1_200, `failed after ${elapsed} ms`);
  });

  it('does not wait out frozen minority members once it holds a majority', async () => {
    const lock = redLock(party(servers, { ...OPTIONS, commandTimeout: 5_000 }), 'no-wait');
    const elapsed = await frozen([0, 4], async () => {
      const started = Date.now();
      await lock.lock();
      const took = Date.now() - started;
      await lock.unlock();
      return took;
    });
    assert.ok(elapsed < 2_500, `acquired in ${elapsed} ms`);
    await sleep(100);
    assert.deepEqual(await heldOn('no-wait'), []);
  });

  it('members that answer after the majority join the hold, and are released with it', async () => {
    const lock = redLock(party(), 'late-join');
    const lease = await frozen([4], async () => {
      const taken = await lock.acquire();
      await eventually(async () => (await heldOn('late-join', redis.slice(0, 4))).length === 4, 2_000, '0-3 held');
      return taken;
    });
    // Server 4 resumed: its answer comes now, and the member joins the hold instead of being dropped.
    await eventually(async () => (await heldOn('late-join')).length === 5, 2_000, 'member 4 joined');
    // It counts towards the majority: two members lost still leave three.
    const thief = party();
    await Promise.all([0, 1].map((i) => thief[i]!.getLock('late-join').forceUnlock()));
    await sleep(800);
    assert.equal(lease.signal.aborted, false);
    await assert.rejects(lease.release(), MemberReleaseError);
    assert.deepEqual(await heldOn('late-join'), []);
  });

  it('fails cleanly with 3 of 5 frozen: QuorumError naming each member, nothing held once they resume', async () => {
    const lock = redLock(party(), 'three-frozen');
    await frozen([0, 2, 4], async () => {
      await assert.rejects(lock.tryLock(), (error: unknown) => {
        assert.ok(error instanceof QuorumError);
        assert.equal(error.code, 'LATCHKEY_QUORUM');
        assert.deepEqual(
          error.failures.map((f) => [f.index, f.reason]),
          [
            [0, 'timeout'],
            [2, 'timeout'],
            [4, 'timeout'],
          ],
        );
        // A timeout is told by a typed marker on the member's error: its call may have run.
        for (const failure of error.failures) {
          assert.ok(failure.error instanceof RedisUnavailableError && failure.error.outcomeUnknown);
        }
        assert.ok(error instanceof RedisUnavailableError, 'a QuorumError is a RedisUnavailableError');
        assert.match(error.message, /majority \(3 of 5\)/);
        return true;
      });
      assert.deepEqual(await heldOn('three-frozen', [redis[1]!, redis[3]!]), []);
      await assert.rejects(lock.lock(), QuorumError);
    });
    await sleep(100);
    assert.deepEqual(await heldOn('three-frozen'), []);
  });

  it('a majority held by another RedLock keeps it out; a minority taken meanwhile is given back', async () => {
    const holder = redLock(party(), 'majority');
    await frozen([3, 4], () => holder.lock()); // held with 0, 1, 2; 3 and 4 join once they answer
    await eventually(async () => (await heldOn('majority')).length === 5, 2_000, 'the late members joined');
    const others = party();
    await Promise.all([3, 4].map((i) => others[i]!.getLock('majority').forceUnlock()));
    assert.deepEqual(await heldOn('majority'), [0, 1, 2]);
    const rival = redLock(party(), 'majority');
    assert.equal(await rival.isLocked(), true);
    assert.equal(await rival.tryLock(), false);
    assert.equal(await rival.tryLock({ waitTime: 300 }), false);
    assert.deepEqual(await heldOn('majority'), [0, 1, 2]);
    // Members 3 and 4 were taken from it: unlock says so, and gives back the rest.
    await assert.rejects(holder.unlock(), MemberReleaseError);
    assert.equal(await rival.tryLock({ waitTime: 1_000 }), true);
    await eventually(async () => (await heldOn('majority')).length === 5, 2_000, 'the rival holds all five');
    await rival.unlock();
  });

  it('busy members are reported as busy when a majority is held elsewhere', async () => {
    const others = party();
    await Promise.all([0, 1, 2].map((i) => others[i]!.getLock('busy').lock()));
    const lock = redLock(party(), 'busy');
    // Busy members alone are no outage: the answer is false, not QuorumError.
    assert.equal(await lock.tryLock(), false);
    assert.deepEqual(await heldOn('busy'), [0, 1, 2]);
    await Promise.all([0, 1, 2].map((i) => others[i]!.getLock('busy').forceUnlock()));
  });
});

describe('RedLock: validity, leases and loss', () => {
  it('applies the validity rule: a lease used up while reaching the majority is released and the attempt fails', async () => {
    const lock = redLock(party(servers, { ...OPTIONS, commandTimeout: 2_000 }), 'validity');
    await frozen([0, 1, 2], async () => {
      // The majority is complete only when server 2 answers, 350 ms in: nothing is left of 200 ms.
      setTimeout(() => servers[2]!.resume(), 350);
      assert.equal(await lock.tryLock({ leaseTime: 200 }), false);
      assert.deepEqual(await heldOn('validity', redis.slice(2)), []);
      // A lease long enough keeps its validity.
      assert.equal(await lock.tryLock({ leaseTime: 5_000 }), true);
      await lock.unlock();
    });
    await sleep(100);
    assert.deepEqual(await heldOn('validity'), []);
  });

  it("a crashed holder's members all expire", async () => {
    const holderClients = party();
    const holder = redLock(holderClients, 'crash');
    await holder.lock();
    await eventually(async () => (await heldOn('crash')).length === 5, 2_000, 'all five members held');
    // shutdown() stops renewal without releasing, as a crash would.
    await Promise.all(holderClients.map((client) => client.shutdown()));
    assert.deepEqual(await heldOn('crash'), [0, 1, 2, 3, 4]);
    await sleep(1_100);
    assert.deepEqual(await heldOn('crash'), []);
  });

  it('survives losing a minority of members, and is lost with the majority', async () => {
    const clients = party();
    const lock = redLock(clients, 'lose-majority');
    const lost: string[] = [];
    clients[0]!.on('lockLost', (name) => lost.push(name));
    const lease = await lock.acquire();
    await eventually(async () => (await heldOn('lose-majority')).length === 5, 2_000, 'all five members held');
    const thief = party();
    await thief[0]!.getLock('lose-majority').forceUnlock();
    await thief[1]!.getLock('lose-majority').forceUnlock();
    await sleep(800);
    assert.equal(lease.signal.aborted, false);
    assert.deepEqual(lost, []);
    await thief[2]!.getLock('lose-majority').forceUnlock();
    await sleep(800);
    assert.ok(lease.signal.reason instanceof LockLostError);
    assert.deepEqual(lost, [lock.name]);
    await assert.rejects(lease.release());
    assert.deepEqual(await heldOn('lose-majority'), []);
  });
});

describe('RedLock: killed servers', () => {
  it('succeeds with 2 of 5 servers killed', async () => {
    const doomed = await Promise.all([startServer(), startServer()]);
    const clients = party([servers[0]!, servers[1]!, servers[2]!, ...doomed]);
    await Promise.all(doomed.map((server) => server.stop(true)));
    const lock = redLock(clients, 'killed');
    await lock.lock();
    assert.deepEqual(await heldOn('killed', redis.slice(0, 3)), [0, 1, 2]);
    await lock.unlock();
    assert.deepEqual(await heldOn('killed', redis.slice(0, 3)), []);
    assert.equal(await lock.withLock(() => 'done', { waitTime: 1_000, leaseTime: 2_000 }), 'done');
  });

  it('fails with QuorumError naming connection errors when 3 of 5 servers are gone', async () => {
    const doomed = await Promise.all([startServer(), startServer(), startServer()]);
    const on = [servers[0]!, ...doomed, servers[1]!];
    // Without an offline queue a dead server fails at once instead of timing out.
    const connections = on.map((server) => server.client({ enableOfflineQueue: false }));
    await Promise.all(connections.map((connection) => once(connection, 'ready')));
    const clients = connections.map((connection) => new LockClient(connection, OPTIONS));
    try {
      const closed = connections.slice(1, 4).map((connection) => once(connection, 'close'));
      await Promise.all(doomed.map((server) => server.stop(true)));
      await Promise.all(closed);
      const lock = redLock(clients, 'dead');
      await assert.rejects(lock.tryLock({ waitTime: 500 }), (error: unknown) => {
        assert.ok(error instanceof QuorumError);
        assert.deepEqual(
          error.failures.map((f) => [f.index, f.reason]),
          [
            [1, 'error'],
            [2, 'error'],
            [3, 'error'],
          ],
        );
        return true;
      });
      assert.deepEqual(await heldOn('dead', [redis[0]!, redis[1]!]), []);
    } finally {
      await Promise.all(clients.map((client) => client.shutdown()));
    }
  });
});
