/**
 * The adapter conformance suite: what every adapter of the `RedisConnection` port must do, run
 * against one adapter on one deployment at a time. Test files describe their cases (a client
 * library and version on standalone, Cluster or Sentinel) and call `describeConformance()`.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, describe, it } from 'node:test';
import type { Cluster, Redis } from 'ioredis';
import { LockClient, RedisUnavailableError } from '../../src/index.js';
import { lockKeys } from '../../src/keys.js';
import type { LuaScript, RedisConnection } from '../../src/redis/connection.js';
import { toConnection } from '../../src/redis/to-connection.js';
import { lockStatus } from '../../src/scripts/index.js';
import { eventually, sleep } from '../../harness/eventually.js';

/** One adapter on one deployment, with a plain client of the deployment to look from. */
export interface AdapterCase {
  /** The client library (and version) the case uses, e.g. `ioredis 6`. */
  readonly name: string;
  readonly deployment: 'standalone' | 'cluster' | 'sentinel';
  /** The adapter class `toConnection()` must pick for this client. */
  readonly adapter: string;
  /** A client of the library, connected, and the adapter over it (closed by `close`). */
  make: () => Promise<{ connection: RedisConnection; client: object }>;
  /** A plain ioredis client of the deployment (a Cluster client routes by key). */
  admin: () => Redis | Cluster;
  /** Subscribers of a sharded channel, on whichever node serves it. */
  subscribers: (channel: string) => Promise<number>;
  /** Reads processed by the server so far (standalone only: the write-coalescing check). */
  readsProcessed?: () => Promise<number>;
  /** Closes the clients this case made, at the end of the file. */
  close: () => Promise<void>;
}

/** A script as the generated index describes one: its name, source and SHA-1. */
export function testScript(name: string, source: string): LuaScript {
  return { name, sha: createHash('sha1').update(source).digest('hex'), source };
}

const probe = testScript('test/probe', "return {1, 'two', {3}, redis.call('hget', KEYS[1], 'f')}");
const listener = (message: (text: string) => void) => ({ message, reconnected: () => undefined });

/** Subscribers of `channel` on the given nodes, summed (SHARDNUMSUB per node). */
export async function shardSubscribers(nodes: readonly Redis[], channel: string): Promise<number> {
  const counts = await Promise.all(
    nodes.map((node) => node.pubsub('SHARDNUMSUB', channel) as Promise<[string, number]>),
  );
  return counts.reduce((sum, [, count]) => sum + Number(count), 0);
}

/** `total_reads_processed` of a server's INFO stats. */
export async function readsProcessed(admin: { info(section: string): Promise<string> }): Promise<number> {
  return Number(/total_reads_processed:(\d+)/.exec(await admin.info('stats'))?.[1]);
}

/**
 * Runs the suite for each case. `peerOf(case)` gives another case on the same deployment (another
 * client library), with which locks must exclude each other.
 */
export function describeConformance(
  cases: readonly AdapterCase[],
  peerOf: (of: AdapterCase) => AdapterCase | undefined = (of) =>
    cases.find((other) => other.deployment === of.deployment && other.name !== of.name),
): void {
  for (const testCase of cases) describeCase(testCase, peerOf(testCase));
  // At the end of the file: a case's clients serve as peers of later suites too.
  after(async () => {
    for (const testCase of cases) await testCase.close();
  });
}

function describeCase(testCase: AdapterCase, peer: AdapterCase | undefined): void {
  const { name, deployment, make, admin, subscribers } = testCase;
  describe(`adapter conformance: ${name} on ${deployment}`, () => {
    it('is picked automatically from the client', async () => {
      const { client, connection: made } = await make();
      await made.close();
      const connection = toConnection(client);
      assert.equal(connection.constructor.name, testCase.adapter);
      await connection.close();
    });

    it('runs scripts: integers, strings, nested arrays and nil replies', async () => {
      const { connection } = await make();
      assert.deepEqual(await connection.evalScript(probe, ['adapter:none'], []), [1, 'two', [3], null]);
      assert.deepEqual(await connection.evalScript(lockStatus, ['latchkey:{none}:lock'], ['owner']), [0, 0, -2]);
      await connection.close();
    });

    const reads = testCase.readsProcessed;
    if (reads)
      it('sends the scripts of one tick in a few socket writes, each answered with its own reply', async () => {
        const { connection } = await make();
        const echo = testScript('test/echo', 'return ARGV[1]');
        await connection.evalScript(echo, [], ['warm-up']); // loads the script (NOSCRIPT, then EVAL)
        const readsBefore = await reads();
        const replies = await Promise.all(
          Array.from({ length: 64 }, (_, i) => connection.evalScript(echo, [], [`reply ${i}`])),
        );
        // The INFO call that reads the count is a read too.
        const count = (await reads()) - readsBefore - 1;
        assert.deepEqual(
          replies,
          Array.from({ length: 64 }, (_, i) => `reply ${i}`),
        );
        assert.ok(count <= 8, `64 scripts took ${count} reads of the server`);
        await connection.close();
      });

    it("passes Redis' own reply errors through unchanged", async () => {
      const { connection } = await make();
      await admin().set('adapter:string', 'x');
      const error = await connection.evalScript(lockStatus, ['adapter:string'], ['owner']).catch((e: unknown) => e);
      assert.ok(error instanceof Error && /WRONGTYPE/.test(error.message), String(error));
      assert.ok(!(error instanceof RedisUnavailableError));
      await connection.close();
    });

    it('subscribes (sharded), delivers messages to every listener of a channel, unsubscribes after the last', async () => {
      const { connection } = await make();
      const channel = `adapter:${name}:{ch}`;
      const got: string[] = [];
      const offA = await connection.subscribe(
        channel,
        listener((m) => got.push(`a:${m}`)),
      );
      const offB = await connection.subscribe(
        channel,
        listener((m) => got.push(`b:${m}`)),
      );
      // Waits listen with sharded pub/sub (the scripts SPUBLISH).
      await admin().spublish(channel, '1');
      await eventually(() => got.length === 2, 2_000, 'both listeners heard it');
      assert.deepEqual(got.sort(), ['a:1', 'b:1']);
      await offA();
      assert.equal(await subscribers(channel), 1);
      await offB();
      await eventually(async () => (await subscribers(channel)) === 0, 2_000, 'unsubscribed');
      await connection.close();
    });

    it('groups keys per server, or per Cluster primary', async () => {
      const { connection } = await make();
      // Connected, a Cluster client knows its slot map.
      await connection.evalScript(probe, ['adapter:none'], []);
      const keys = Array.from({ length: 32 }, (_, i) => `latchkey:{group-${i}}:lock`);
      const groups = () => new Set(keys.map((key) => connection.batchGroup(key)));
      // A Cluster adapter that reads the slot map itself may take a moment to have it.
      if (deployment === 'cluster')
        await eventually(() => groups().size >= 2 && groups().size <= 3, 2_000, 'one group per primary');
      else assert.equal(groups().size, 1);
      await connection.close();
    });

    if (peer)
      it(`locks exclude each other with ${peer.name}, and waiters are woken through it`, async () => {
        const { client } = await make();
        const { client: another } = await peer.make();
        const mine = new LockClient(client as never);
        const other = new LockClient(another as never);
        const lockName = `cross-adapter:${name}:${deployment}`;
        const lock = mine.getLock(lockName);
        await lock.lock();
        assert.equal(await other.getLock(lockName).tryLock(), false);
        const theirs = other.getLock(lockName);
        const waiting = theirs.tryLock({ waitTime: 5_000 });
        await sleep(100);
        await lock.unlock();
        assert.equal(await waiting, true);
        // And the other way round: this adapter's waiter is woken by the peer's release.
        const mineWaiting = lock.tryLock({ waitTime: 5_000 });
        await sleep(100);
        await theirs.unlock();
        assert.equal(await mineWaiting, true);
        await lock.unlock();
        await mine.shutdown();
        await other.shutdown();
      });

    it('tells a holder at once that its lock was deleted, where it can track keys (else at renewal)', async () => {
      const { client, connection } = await make();
      // Whether the adapter opens a tracking link here (none on a Cluster, nor node-redis' Sentinel).
      const probing = new AbortController();
      const link = connection.openTrackingLink?.('latchkey-conformance-probe', probing.signal);
      const tracks = link !== undefined;
      (await link?.catch(() => undefined))?.close();
      probing.abort();
      await connection.close();
      // Without tracking, loss is found at the next renewal: a short lease makes it come soon.
      const locks = new LockClient(client as never, tracks ? {} : { watchdogTimeout: 600 });
      const lockName = `lost:${name}:${deployment}`;
      const { signal } = await locks.getLock(lockName).acquire();
      await sleep(100); // the hold is read on the tracking connection 50 ms after it is taken
      const deleted = Date.now();
      await admin().del(lockKeys('latchkey:', lockName).hash);
      await eventually(() => signal.aborted, tracks ? 1_000 : 2_000, 'the lease signal aborted');
      if (tracks) assert.ok(Date.now() - deleted < 1_000, 'by push, not by renewal (every 10 s)');
      await locks.shutdown();
    });

    it('a LockClient on it holds, renews and releases a lock, and shuts down cleanly', async () => {
      const { client } = await make();
      const locks = new LockClient(client as never, { watchdogTimeout: 1_000 });
      const lock = locks.getLock(`renewed:${name}:${deployment}`);
      await lock.lock();
      // Renewed a third of the way through: past half the lease, more than half of it is left.
      await sleep(600);
      assert.ok((await lock.remainTimeToLive()) > 500, 'renewed by the watchdog');
      await lock.unlock();
      assert.equal(await lock.isLocked(), false);
      await locks.shutdown();
    });
  });
}
