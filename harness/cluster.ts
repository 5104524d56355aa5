/**
 * A real local Redis Cluster of three primaries and no replicas, for tests of routing and
 * cross-slot behaviour; its clients and nodes stop when the test file ends. For failovers and
 * slot migration, see replicated-cluster.ts.
 */
import { Cluster } from 'ioredis';
import { LockClient, type LockClientOptions } from '../src/index.js';
import { atFileEnd } from './cleanup.js';
import { startFormedCluster } from './form-cluster.js';
import type { RedisProcess } from './redis-process.js';

/** Three primaries, the slots split as redis-cli splits them (0-5460, 5461-10922, 10923-16383). */
export interface TestCluster {
  readonly nodes: readonly RedisProcess[];
  /** A new ioredis Cluster client (closed after the file). */
  client(): Cluster;
  /** A LockClient on a new Cluster client (shut down after the file). */
  lockClient(options?: LockClientOptions): LockClient;
}

export async function startCluster(): Promise<TestCluster> {
  const nodes = await startFormedCluster(3);
  for (const node of nodes) atFileEnd(() => node.stop(true));
  const client = (): Cluster => {
    const cluster = new Cluster(nodes.map((node) => ({ host: node.host, port: node.port })));
    cluster.on('error', () => undefined);
    atFileEnd(() => cluster.disconnect());
    return cluster;
  };
  const lockClient = (options?: LockClientOptions): LockClient => {
    const locks = new LockClient(client(), options);
    atFileEnd(() => locks.shutdown());
    return locks;
  };
  return { nodes, client, lockClient };
}
