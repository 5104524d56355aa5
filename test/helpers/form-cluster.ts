import { Redis } from 'ioredis';
import type { RedisProcess } from '../../src/cli/redis-server.js';

/** The command-line options that make a redis-server a Cluster node, with `nodeTimeout` ms to declare a node failed. */
export const clusterNodeArgs = (nodeTimeout = 5_000): string[] => [
  '--cluster-enabled',
  'yes',
  '--cluster-config-file',
  'nodes.conf',
  '--cluster-node-timeout',
  String(nodeTimeout),
];

/**
 * Forms a Redis Cluster of `primaries` (started with clusterNodeArgs), the 16,384 slots split
 * evenly in order, and resolves once every node says the cluster is ok. Used by the tests and the
 * bench (no node:test import here).
 */
export async function formCluster(primaries: readonly RedisProcess[]): Promise<void> {
  const admins = primaries.map((node) => new Redis({ port: node.port, host: node.host }));
  try {
    const size = Math.ceil(16_384 / primaries.length);
    // Distinct config epochs (as redis-cli does): no epoch collision to resolve.
    await Promise.all(
      admins.map(async (admin, i) => {
        await admin.call('CLUSTER', 'SET-CONFIG-EPOCH', i + 1);
        await admin.call('CLUSTER', 'ADDSLOTSRANGE', i * size, Math.min(16_383, (i + 1) * size - 1));
      }),
    );
    // Every node meets every other. Met through one seed only, a node may learn the slots of a
    // node it knows by gossip several seconds later (up to 6 s seen on an idle machine), and a
    // loaded CI machine once took over 10 s.
    await Promise.all(
      admins.flatMap((admin, i) =>
        primaries.slice(i + 1).map((node) => admin.call('CLUSTER', 'MEET', node.host, node.port)),
      ),
    );
    // A new primary turns ok only ~2 s after its start (Redis's writable delay); the bound is for a loaded machine.
    const deadline = Date.now() + 30_000;
    for (;;) {
      const infos = await Promise.all(admins.map((admin) => admin.call('CLUSTER', 'INFO') as Promise<string>));
      const known = `cluster_known_nodes:${primaries.length}`;
      if (infos.every((info) => info.includes('cluster_state:ok') && info.includes(known))) return;
      if (Date.now() > deadline) throw new Error(`cluster did not form within 30 s: ${infos.join('\n')}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  } finally {
    for (const admin of admins) admin.disconnect();
  }
}
