import { writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after } from 'node:test';
import { Cluster, Redis } from 'ioredis';
import { startRedisServer, type RedisProcess } from '../../src/cli/redis-server.js';
import { LockClient, type LockClientOptions } from '../../src/index.js';
import { clusterNodeArgs, formCluster } from './form-cluster.js';

const cleanups: (() => Promise<void>)[] = [];
after(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
});

/** A real local Redis Cluster of three primaries (no replicas), slots split evenly. */
export interface TestCluster {
  readonly nodes: readonly RedisProcess[];
  /** A new ioredis Cluster client (closed after the file). */
  client(): Cluster;
  /** A LockClient on a new Cluster client (shut down after the file). */
  lockClient(options?: LockClientOptions): LockClient;
}

export async function startCluster(): Promise<TestCluster> {
  const nodes = await Promise.all([0, 1, 2].map(() => startRedisServer(clusterNodeArgs())));
  for (const node of nodes) cleanups.push(() => node.stop(true));
  await formCluster(nodes);
  const client = (): Cluster => {
    const cluster = new Cluster(nodes.map((node) => ({ host: node.host, port: node.port })));
    cluster.on('error', () => undefined);
    cleanups.push(() => Promise.resolve(cluster.disconnect()));
    return cluster;
  };
  const lockClient = (options?: LockClientOptions): LockClient => {
    const locks = new LockClient(client(), options);
    cleanups.push(() => locks.shutdown());
    return locks;
  };
  return { nodes, client, lockClient };
}

/** A primary watched by one real Sentinel process. */
export interface TestSentinel {
  readonly primary: RedisProcess;
  readonly sentinel: RedisProcess;
  readonly name: string;
  /** An ioredis client that finds the primary through the Sentinel (closed after the file). */
  client(): Redis;
}

export async function startSentinel(): Promise<TestSentinel> {
  const primary = await startRedisServer();
  cleanups.push(() => primary.stop(true));
  const dir = mkdtempSync(join(tmpdir(), 'latchkey-sentinel-'));
  cleanups.push(() => Promise.resolve(rmSync(dir, { recursive: true, force: true })));
  const name = 'latchkeyprimary';
  const config = join(dir, 'sentinel.conf');
  writeFileSync(
    config,
    `sentinel monitor ${name} 127.0.0.1 ${primary.port} 1\nsentinel down-after-milliseconds ${name} 5000\n`,
  );
  // redis-server <config> --sentinel: the config file must come first and be writable.
  const sentinel = await startRedisServer([], [config, '--sentinel']);
  cleanups.push(() => sentinel.stop(true));
  return {
    primary,
    sentinel,
    name,
    client() {
      const redis = new Redis({
        sentinels: [{ host: sentinel.host, port: sentinel.port }],
        name,
        failoverDetector: true,
      });
      redis.on('error', () => undefined);
      cleanups.push(() => Promise.resolve(redis.disconnect()));
      return redis;
    },
  };
}
