/**
 * Smoke test of the deployment harness (harness/replicated-cluster.ts, sentinel-group.ts,
 * restartable-server.ts) with raw ioredis and
 * node-redis clients: every operation works and leaves the topology and data it promises.
 */
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import type { Cluster, Redis } from 'ioredis';
import { directClient, type NodeRedisCluster, type NodeRedisSentinel } from '../../harness/clients.js';
import { startReplicatedCluster, type ReplicatedCluster } from '../../harness/replicated-cluster.js';
import { startRestartableServer, type RestartableServer } from '../../harness/restartable-server.js';
import { startSentinelGroup, type SentinelGroup } from '../../harness/sentinel-group.js';
import type { DeploymentNode } from '../../harness/admin.js';
import { eventually, sleep } from '../../harness/eventually.js';

/**
 * Retries `attempt` (a client catching up with a new topology) until it succeeds, each try bounded
 * by 2 s; resolves with how long that took (ms).
 */
async function retry(what: string, attempt: () => Promise<unknown>, ms = 10_000): Promise<number> {
  const started = Date.now();
  await eventually(
    async () => {
      await withTimeout(attempt(), 2_000);
      return true;
    },
    ms,
    what,
    { every: 20, retryErrors: true },
  );
  return Date.now() - started;
}

async function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no reply in ${ms} ms`)), ms))),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

let cluster: ReplicatedCluster;
let group: SentinelGroup;
let server: RestartableServer;
let ready = '';
before(async () => {
  const started = Date.now();
  const times: string[] = [];
  const timed = async <T>(what: string, start: () => Promise<T>): Promise<T> => {
    const value = await start();
    times.push(`${what} ${Date.now() - started} ms`);
    return value;
  };
  [cluster, group, server] = await Promise.all([
    timed('cluster', startReplicatedCluster),
    timed('sentinel group', startSentinelGroup),
    timed('restartable server', () => startRestartableServer()),
  ]);
  ready = times.join(', ');
});

// The three deployments are independent: their suites run side by side, the steps of each in order.
describe('deployment harness', { concurrency: 3 }, () => {
  describe('replicated cluster', { concurrency: 1 }, () => {
    it('starts with 3 primaries, each with 1 replica, slots split evenly', async (t) => {
      t.diagnostic(`ready after: ${ready}`);
      const primaries = await cluster.primaries();
      assert.deepEqual(
        primaries.map((node) => node.port),
        cluster.nodes.slice(0, 3).map((node) => node.port),
      );
      for (const [i, primary] of primaries.entries()) {
        assert.deepEqual(
          (await cluster.replicasOf(primary)).map((node) => node.port),
          [cluster.nodes[i + 3]!.port],
        );
      }
      assert.equal((await cluster.slotsOf(primaries[0]!)).length, 5461);
      assert.equal((await cluster.primaryOf(16383)).port, primaries[2]!.port);
      const name = await cluster.nameOn(primaries[1]!, 'lock');
      assert.equal((await cluster.primaryOf(`latchkey:{${name}}:lock`)).port, primaries[1]!.port);
      assert.equal((await cluster.primaryOf(cluster.nameInSlot(42))).port, primaries[0]!.port);
    });

    // Shared by the steps below, which run in order on the same cluster.
    let io: Cluster;
    let nr: NodeRedisCluster;
    let onFirst: string;
    let onSecond: string;

    it('writes keys on chosen primaries through ioredis and node-redis', async () => {
      io = cluster.ioredis();
      nr = await cluster.nodeRedis();
      const [first, second, third] = await cluster.primaries();
      // Keys on each primary, written by each client and read by the other.
      onFirst = await cluster.nameOn(first!);
      onSecond = await cluster.nameOn(second!);
      const onThird = await cluster.nameOn(third!);
      await io.set(onFirst, 'io-1');
      await nr.set(onSecond, 'nr-2');
      await io.set(onThird, 'io-3');
      assert.equal(await nr.get(onFirst), 'io-1');
      assert.equal(await io.get(onSecond), 'nr-2');
      assert.equal(await nr.get(onThird), 'io-3');
      assert.equal(await directClient(second!).get(onSecond), 'nr-2', 'the key lives on the chosen primary');
    });

    it('fails over manually: the replica takes over, the old primary replicates from it', async (t) => {
      const failover = await cluster.manualFailover(onFirst);
      t.diagnostic(`manual failover ${failover.from.port} -> ${failover.to.port}: ${failover.ms} ms`);
      assert.equal((await cluster.primaryOf(onFirst)).port, failover.to.port);
      assert.deepEqual(
        (await cluster.replicasOf(failover.to)).map((node) => node.port),
        [failover.from.port],
      );
      assert.equal(await directClient(failover.to).get(onFirst), 'io-1');
      // Both clients follow the MOVED the old primary now answers.
      await retry('ioredis after the manual failover', async () => assert.equal(await io.get(onFirst), 'io-1'));
      await retry('node-redis after the manual failover', async () => assert.equal(await nr.get(onFirst), 'io-1'));
      await io.set(onFirst, 'io-1b');
      assert.equal(await nr.get(onFirst), 'io-1b');
    });

    it('replaces a killed primary with its replica', async (t) => {
      // The replica has the data: replication is asynchronous, but these writes are long acknowledged.
      const killed = await cluster.killPrimary(onSecond);
      t.diagnostic(`killed primary ${killed.from.port}, ${killed.to.port} took over: ${killed.ms} ms`);
      assert.equal(killed.from.alive, false);
      assert.equal((await cluster.primaryOf(onSecond)).port, killed.to.port);
      assert.deepEqual(await cluster.replicasOf(killed.to), []);
      const ioBack = await retry('ioredis after the kill', async () => assert.equal(await io.get(onSecond), 'nr-2'));
      t.diagnostic(`ioredis read the killed primary's key again after ${ioBack} ms`);
      // node-redis 5 re-reads the topology only on MOVED or ASK and keeps the dead node's client,
      // reconnecting forever: commands for its slots wait in that client's offline queue
      // (redis/node-redis#2806). A client created after the failover works.
      const stuck = await withTimeout(nr.get(onSecond), 1_500).then(
        () => false,
        () => true,
      );
      t.diagnostic(`node-redis client created before the kill ${stuck ? 'is stuck on the dead node' : 'recovered'}`);
      nr = await cluster.nodeRedis();
      assert.equal(await nr.get(onSecond), 'nr-2');
      await nr.set(onSecond, 'nr-2b');
      assert.equal(await io.get(onSecond), 'nr-2b');
    });

    it('migrates a slot with its keys while both clients keep writing to it', async (t) => {
      const [, , third] = await cluster.primaries();
      const target = await cluster.primaryOf(onSecond);
      const slot = (await cluster.slotsOf(third!))[100]!;
      const tag = cluster.nameInSlot(slot, 'tag');
      const keys = Array.from({ length: 250 }, (_, i) => `{${tag}}:${i}`);
      await io.mset(...keys.flatMap((key) => [key, key]));
      // Scripts over two keys of the slot (as latchkey's are) get TRYAGAIN while one key has moved
      // and the other has not. The counter counts the scripts that ran.
      const counter = `{${tag}}:counter`;
      await io.set(counter, 0);
      const script = "redis.call('set', KEYS[1], ARGV[1]); return redis.call('incr', KEYS[2])";
      let writing = true;
      const written: string[] = [];
      const errors = new Map<string, number>();
      const writer = async (who: string, write: (key: string) => Promise<unknown>): Promise<void> => {
        for (let i = 0; writing; i++) {
          const key = `{${tag}}:${who}:${i}`;
          try {
            await write(key);
            written.push(key);
          } catch (error) {
            const what = `${who} ${error instanceof Error ? error.message.split(' ')[0] : String(error)}`;
            errors.set(what, (errors.get(what) ?? 0) + 1);
          }
        }
      };
      const writers = Promise.all([
        writer('io', (key) => io.set(key, key)),
        writer('nr', (key) => nr.set(key, key)),
        writer('io-eval', (key) => io.eval(script, 2, key, counter, key)),
        writer('nr-eval', (key) => nr.eval(script, { keys: [key, counter], arguments: [key] })),
      ]);
      await sleep(50);
      const migration = await cluster.migrateSlot(slot, target, { batch: 100 });
      await sleep(50);
      writing = false;
      await writers;
      t.diagnostic(
        `migrated slot ${slot} (${migration.keys} keys) ${migration.from.port} -> ${migration.to.port}: ` +
          `${migration.ms} ms; ${written.length} writes meanwhile, errors: ${JSON.stringify([...errors])}`,
      );
      assert.equal(migration.from.port, third!.port);
      assert.ok(migration.keys >= keys.length, `${migration.keys} keys moved`);
      assert.equal((await cluster.primaryOf(slot)).port, target.port);
      assert.equal(
        await directClient(target).call('CLUSTER', 'COUNTKEYSINSLOT', slot),
        keys.length + 1 + written.length,
        'every key is on the target',
      );
      assert.equal(await directClient(third!).call('CLUSTER', 'COUNTKEYSINSLOT', slot), 0);
      const scripts = written.filter((key) => key.includes('-eval:')).length;
      assert.equal(await io.get(counter), String(scripts), 'every script that succeeded ran exactly once');
      assert.deepEqual(await io.mget(...keys.slice(0, 5)), keys.slice(0, 5));
      for (const key of [...keys.slice(-3), ...written.slice(-3)]) {
        assert.equal(await io.get(key), key);
        assert.equal(await nr.get(key), key);
      }
      await cluster.settled();
    });
  });

  describe('sentinel group', { concurrency: 1 }, () => {
    let io: Redis;
    let nr: NodeRedisSentinel;
    let promoted: DeploymentNode;

    it('fails over as planned; both clients find the new master', async (t) => {
      io = group.ioredis({ failoverDetector: true });
      nr = await group.nodeRedis();
      const first = await group.master();
      assert.equal(first.port, group.nodes[0]!.port);
      assert.equal((await group.replicas()).length, 2);
      await io.set('before', 'io');
      assert.equal(await nr.get('before'), 'io');

      // How long does the old master keep taking writes?
      const oldMaster = directClient(first);
      let acceptedUntil = 0;
      let probing = true;
      const started = Date.now();
      const prober = (async () => {
        for (let i = 0; probing; i++) {
          try {
            await oldMaster.set('probe', i);
            acceptedUntil = Date.now() - started;
          } catch {
            // READONLY once demoted, or the connection the demotion killed
          }
          await sleep(20);
        }
      })();
      const planned = await group.plannedFailover();
      probing = false;
      await prober;
      t.diagnostic(
        `planned failover ${planned.from.port} -> ${planned.to.port}: promoted ${planned.promotedMs} ms, ` +
          `old master demoted ${planned.demotedMs} ms (took writes until ${acceptedUntil} ms), settled ${planned.ms} ms`,
      );
      promoted = planned.to;
      assert.notEqual(planned.to.port, first.port);
      assert.equal((await group.master()).port, planned.to.port);
      assert.ok(
        (await group.replicas()).some((node) => node.port === first.port),
        'old master is a replica',
      );
      const ioMs = await retry('ioredis after the planned failover', () => io.set('after-planned', 'io'));
      const nrMs = await retry('node-redis after the planned failover', () => nr.set('after-planned-nr', 'nr'));
      t.diagnostic(`after the planned failover: ioredis wrote after ${ioMs} ms, node-redis after ${nrMs} ms`);
      const newMaster = directClient(planned.to);
      assert.equal(await newMaster.get('after-planned'), 'io');
      assert.equal(await newMaster.get('after-planned-nr'), 'nr');
      assert.equal(await newMaster.get('before'), 'io');
    });

    it('loses a write that reached only the master when the master dies', async (t) => {
      const lost = await group.failoverBeforeReplication(async (master) => {
        const direct = directClient(master);
        await direct.set('lost', 'yes');
        assert.equal(await direct.call('WAIT', 1, 100), 0, 'no replica acknowledged the write');
        await io.set('lost-io', 'yes');
        assert.equal(await direct.get('lost-io'), 'yes', 'the ioredis client writes to this master');
      });
      t.diagnostic(
        `failover before replication ${lost.from.port} -> ${lost.to.port}: promoted ${lost.promotedMs} ms, ` +
          `settled ${lost.ms} ms`,
      );
      assert.equal(lost.from.port, promoted.port);
      assert.equal(lost.from.alive, false);
      const survivor = directClient(lost.to);
      assert.equal(await survivor.get('lost'), null, 'the unreplicated write is gone');
      assert.equal(await survivor.get('lost-io'), null);
      assert.equal(await survivor.get('after-planned'), 'io', 'replicated writes survive');
      // ioredis 5.11 race: its failoverDetector, still subscribed from the dead master's connection,
      // calls connector.disconnect() on +switch-master; if that lands while a reconnect is asking
      // the Sentinels for the master, the pending connect() throws "Connection is closed." and the
      // client ends for good (status 'end', every later command refused). Seen in ~1 of 4 runs
      // under load. A new client is then the only way on.
      const settled = Date.now();
      while (io.status !== 'ready' && io.status !== 'end' && Date.now() - settled < 3_000) await sleep(20);
      if (io.status === 'end') {
        t.diagnostic('the ioredis client ended for good during the failover (failoverDetector race): using a new one');
        io = group.ioredis({ failoverDetector: true });
      }
      const ioMs = await retry('ioredis after the failover', async () => {
        assert.equal(await io.get('lost'), null);
        await io.set('after-lost', 'io');
      });
      const nrMs = await retry('node-redis after the failover', async () => {
        assert.equal(await nr.get('lost'), null);
        await nr.set('after-lost-nr', 'nr');
      });
      t.diagnostic(`after the failover: ioredis back after ${ioMs} ms, node-redis after ${nrMs} ms`);
      assert.equal(await survivor.get('after-lost'), 'io');
      assert.equal(await survivor.get('after-lost-nr'), 'nr');
      assert.deepEqual(
        (await group.replicas()).map((node) => node.port),
        group.nodes.filter((node) => node.alive && node.port !== lost.to.port).map((node) => node.port),
      );
    });
  });

  describe('restartable server', { concurrency: 1 }, () => {
    it('restarts empty on the same port and both clients reconnect', async (t) => {
      const log = (message: string): void => t.diagnostic(message);
      const io = server.ioredis();
      const nr = await server.nodeRedis();
      await io.set('kept?', 'no');
      assert.equal(await nr.get('kept?'), 'no');
      const pid = server.process.child.pid;
      const away = await server.restart();
      assert.notEqual(server.process.child.pid, pid);
      const [ioMs, nrMs] = await Promise.all([
        retry('ioredis after the restart', async () => assert.equal(await io.get('kept?'), null)),
        retry('node-redis after the restart', async () => assert.equal(await nr.get('kept?'), null)),
      ]);
      log(`restart: server away ${away} ms; ioredis back after ${ioMs} ms, node-redis after ${nrMs} ms`);
      await io.set('new', 'io');
      assert.equal(await nr.get('new'), 'io');
    });
  });
});
