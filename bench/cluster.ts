/** A private Redis Cluster for scenario 4's Cluster row, formed by the harness, with the bench's own connections. */
import { Cluster, Redis } from 'ioredis';
import { startFormedCluster } from '../harness/form-cluster.js';
import type { RedisProcess } from '../harness/redis-process.js';

export interface BenchCluster {
  readonly nodes: readonly RedisProcess[];
  /** One plain connection to each primary, for its counters. */
  readonly admins: readonly Redis[];
  readonly client: Cluster;
  stop(): Promise<void>;
}

export async function startBenchCluster(primaries: number): Promise<BenchCluster> {
  const nodes = await startFormedCluster(primaries);
  const admins = nodes.map((node) => new Redis({ port: node.port, host: node.host }));
  const client = new Cluster(nodes.map(({ host, port }) => ({ host, port })));
  for (const connection of [...admins, client]) connection.on('error', () => undefined);
  await new Promise((resolve) => client.once('ready', resolve));
  return {
    nodes,
    admins,
    client,
    async stop() {
      client.disconnect();
      for (const admin of admins) admin.disconnect();
      await Promise.all(nodes.map((node) => node.stop(true)));
    },
  };
}
