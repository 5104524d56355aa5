/**
 * Forming a Redis Cluster from fresh redis-server processes, written once for the tests (with and
 * without replicas) and the bench: slots split as `redis-cli --cluster create` splits them, every
 * node meeting every other, replicas attached. No node:test import here.
 */
import { Redis } from 'ioredis';
import { eventually } from './eventually.js';
import { startRedisServer, type RedisProcess } from './redis-process.js';

/** The command-line options that make a redis-server a Cluster node, with `nodeTimeout` ms to declare a node failed. */
export const clusterNodeArgs = (nodeTimeout = 5_000): string[] => [
  '--cluster-enabled',
  'yes',
  '--cluster-config-file',
  'nodes.conf',
  '--cluster-node-timeout',
  String(nodeTimeout),
];

/** The 16,384 slots split over `primaries` as redis-cli does (3 primaries: 0-5460, 5461-10922, 10923-16383). */
export function slotRanges(primaries: number): [number, number][] {
  const each = 16_384 / primaries;
  const ranges: [number, number][] = [];
  for (let i = 0, first = 0; i < primaries; i++) {
    const last = i === primaries - 1 ? 16_383 : Math.max(first, Math.round(each * (i + 1) - 1));
    ranges.push([first, last]);
    first = last + 1;
  }
  return ranges;
}

/**
 * Forms a Cluster of `primaries` (started with clusterNodeArgs), the slots split by slotRanges,
 * with `replicas[i]` attached to primary `i % primaries.length`, and resolves once every node
 * knows every other and says cluster_state:ok. Replicas may still be syncing then.
 */
export async function formCluster(
  primaries: readonly RedisProcess[],
  replicas: readonly RedisProcess[] = [],
): Promise<void> {
  const nodes = [...primaries, ...replicas];
  const admins = nodes.map((node) => new Redis({ port: node.port, host: node.host }));
  for (const admin of admins) admin.on('error', () => undefined);
  const text = async (i: number, ...args: string[]): Promise<string> =>
    String(await admins[i]!.call('CLUSTER', ...args));
  try {
    const ranges = slotRanges(primaries.length);
    // Distinct config epochs (as redis-cli does): no epoch collision to resolve.
    await Promise.all(
      ranges.map(async ([first, last], i) => {
        await admins[i]!.call('CLUSTER', 'SET-CONFIG-EPOCH', i + 1);
        await admins[i]!.call('CLUSTER', 'ADDSLOTSRANGE', first, last);
      }),
    );
    // Every node meets every other. Met through one seed only, a node may learn the slots of a
    // node it knows by gossip several seconds later (up to 6 s seen on an idle machine), and a
    // loaded CI machine once took over 10 s.
    await Promise.all(
      admins.flatMap((admin, i) =>
        nodes.slice(i + 1).map((node) => admin.call('CLUSTER', 'MEET', node.host, node.port)),
      ),
    );
    if (replicas.length > 0) {
      // REPLICATE needs the primary's ID in the replica's node table, out of its handshake.
      const ids = await Promise.all(primaries.map((_, i) => text(i, 'MYID')));
      await eventually(
        async (note) => {
          const tables = await Promise.all(nodes.map((_, i) => text(i, 'NODES')));
          const pending = tables.filter((table) => {
            const lines = table.split('\n').filter((line) => line.trim() !== '');
            return lines.length < nodes.length || /handshake|noaddr/.test(table);
          });
          return pending.length === 0 || note(`${pending.length} nodes do not know all others yet`);
        },
        10_000,
        'the cluster nodes meeting each other',
        { every: 50 },
      );
      await Promise.all(replicas.map((_, r) => text(primaries.length + r, 'REPLICATE', ids[r % primaries.length]!)));
    }
    // A new primary turns ok only ~2 s after its start (Redis's writable delay); the bound is for a loaded machine.
    await eventually(
      async (note) => {
        const infos = await Promise.all(nodes.map((_, i) => text(i, 'INFO')));
        const known = `cluster_known_nodes:${nodes.length}`;
        return (
          infos.every((info) => info.includes('cluster_state:ok') && info.includes(known)) || note(infos.join('\n'))
        );
      },
      30_000,
      'the cluster forming',
      { every: 50 },
    );
  } finally {
    for (const admin of admins) admin.disconnect();
  }
}

/**
 * Starts `primaries` cluster nodes (and `replicasEach` replicas per primary) with `args`, and forms
 * the Cluster; stops them all if forming fails. Primaries come first in the result.
 */
export async function startFormedCluster(
  primaries: number,
  { replicasEach = 0, args = clusterNodeArgs() }: { replicasEach?: number; args?: readonly string[] } = {},
): Promise<RedisProcess[]> {
  const count = primaries * (1 + replicasEach);
  const started = await Promise.allSettled(Array.from({ length: count }, () => startRedisServer(args)));
  const nodes = started.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
  try {
    const failed = started.find((result) => result.status === 'rejected');
    if (failed) throw failed.reason;
    await formCluster(nodes.slice(0, primaries), nodes.slice(primaries));
    return nodes;
  } catch (error) {
    await Promise.all(nodes.map((node) => node.stop(true)));
    throw error;
  }
}
