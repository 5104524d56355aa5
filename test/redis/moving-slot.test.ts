import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { clusterSlot } from '../../src/redis/cluster-slot.js';
import { allScripts } from '../../src/scripts/index.js';
import { startCluster, type TestCluster } from '../../harness/cluster.js';

/**
 * While a Cluster slot migrates, a command in a script fails when it reaches a key the node lacks
 * (on the source: not there or no longer there; on the target: any multi-key command missing one),
 * and the script's earlier writes stay: a release could delete the lock and never hand it over or
 * leave its marker. So every script that writes first checks that its slot is not moving and
 * answers TRYAGAIN, having changed nothing. This runs each of them on both sides of a slot held
 * in the middle of a migration, with every key it declares present, and checks just that.
 */
let cluster: TestCluster;
let admins: Redis[] = [];
let source: Redis;
let target: Redis;
const tag = '{moving-slot}';
const slot = clusterSlot(tag);
/** Keys all in the slot, and arguments that would do for any script (they never get that far). */
const KEYS = [1, 2, 3, 4].map((i) => `latchkey:${tag}:key${i}`);
const ARGV = ['1', '1', '1', '1', '1', '1', '1'];

before(async () => {
  cluster = await startCluster();
  admins = cluster.nodes.map((node) => new Redis({ port: node.port, host: node.host }));
  const owner = Math.floor(slot / Math.ceil(16_384 / admins.length));
  source = admins[owner]!;
  target = admins[(owner + 1) % admins.length]!;
  const [sourceId, targetId] = await Promise.all([source.call('CLUSTER', 'MYID'), target.call('CLUSTER', 'MYID')]);
  // Every key a script declares is present on both sides (on the source before it starts to
  // migrate: it then takes no new key), so that the scripts run rather than being redirected.
  for (const key of KEYS) await source.set(key, '1', 'PX', 600_000);
  await target.call('CLUSTER', 'SETSLOT', slot, 'IMPORTING', sourceId as string);
  await source.call('CLUSTER', 'SETSLOT', slot, 'MIGRATING', targetId as string);
  for (const key of KEYS) await target.pipeline().asking().set(key, '1', 'PX', 600_000).exec();
});
after(() => admins.forEach((admin) => admin.disconnect()));

/** The commands a script calls (lower case). */
const commandsOf = (source: string): string[] =>
  [...source.matchAll(/redis\.p?call\('(\w+)'/g)].map(([, command]) => command!.toLowerCase());

/** Scripts that write (a command Redis flags `write`), but for the watchdog's batch renewals. */
async function writers(): Promise<typeof allScripts> {
  const named = new Set(allScripts.flatMap((script) => commandsOf(script.source)));
  const infos = (await source.call('COMMAND', 'INFO', ...named)) as [string, number, string[]][];
  const writes = new Set(infos.filter((info) => info[2].includes('write')).map((info) => info[0]));
  // They declare only their first key and reach each other one through lib/node-local, writing
  // only a key they just read on this node: nothing can fail after their first write.
  const batchRenewal = (source: string): boolean => source.startsWith('#!lua flags=allow-cross-slot-keys');
  // A Cluster runs each script in its Cluster form (see LuaScript.cluster).
  return allScripts
    .map((script) => script.cluster ?? script)
    .filter(
      (script) => !batchRenewal(script.source) && commandsOf(script.source).some((command) => writes.has(command)),
    );
}

/** Every key of the slot on `node` with its value and TTL: what a script must leave as it was. */
async function slotState(node: Redis, asking: boolean): Promise<string> {
  const keys = (await node.call('CLUSTER', 'GETKEYSINSLOT', slot, 100)) as string[];
  const state = [];
  for (const key of keys.sort()) {
    const [[, dump], [, ttl]] = (await (asking ? node.pipeline().asking() : node.pipeline())
      .dumpBuffer(key)
      .pttl(key)
      .exec()
      .then((replies) => (asking ? replies!.slice(1) : replies!))) as [[null, Buffer], [null, number]];
    state.push(`${key}=${dump.toString('hex')}@${ttl > 0 ? 'ttl' : ttl}`);
  }
  return state.join('\n');
}

/** Runs `script` on `node` (after ASKING, on the target). */
async function runMidMigration(node: Redis, asking: boolean, script: (typeof allScripts)[number]): Promise<Error> {
  const before = await slotState(node, asking);
  const call = (asking ? node.pipeline().asking() : node.pipeline()).eval(script.source, KEYS.length, ...KEYS, ...ARGV);
  const replies = (await call.exec())!;
  const [error, reply] = replies[replies.length - 1]!;
  assert.equal(
    await slotState(node, asking),
    before,
    `${script.name} changed the slot on the ${asking ? 'target' : 'source'}`,
  );
  assert.ok(error instanceof Error, `${script.name} ran on a moving slot and answered ${JSON.stringify(reply)}`);
  return error;
}

describe('scripts that write, on a Cluster slot in the middle of a migration', () => {
  it('answer TRYAGAIN and change nothing, on the source and on the target (ASKING)', async () => {
    const scripts = await writers();
    // The lock's own scripts at least; a script that stops writing drops out of this list.
    for (const name of ['lock/acquire', 'lock/release', 'lock/force-unlock', 'semaphore/acquire']) {
      assert.ok(
        scripts.some((script) => script.name === name),
        `${name} counted as a script that writes`,
      );
    }
    for (const script of scripts) {
      for (const [node, asking] of [
        [source, false],
        [target, true],
      ] as const) {
        const error = await runMidMigration(node, asking, script);
        assert.match(error.message, /^TRYAGAIN /, `${script.name} on the ${asking ? 'target' : 'source'}`);
      }
    }
  });
});
