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
    await Promise.all(
      admins.map((admin, i) => admin.call('CLUSTER', 'ADDSLOTSRANGE', i * size, Math.min(16_383, (i + 1) * size - 1))),
    );
    for (const node of primaries.slice(1)) await admins[0]!.call('CLUSTER', 'MEET', node.host, node.port);
    for (let tries = 0; ; tries++) {
      const infos = await Promise.all(admins.map((admin) => admin.call('CLUSTER', 'INFO') as Promise<string>));
      const known = `cluster_known_nodes:${primaries.length}`;
      if (infos.every((info) => info.includes('cluster_state:ok') && info.includes(known))) return;
      if (tries > 200) throw new Error(`cluster did not form: ${infos[0]}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  } finally {
    for (const admin of admins) admin.disconnect();
  }
}
