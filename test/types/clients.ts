/**
 * Type-level check, compiled by `npm run typecheck` (never run): every client latchkey supports is
 * accepted by `new LockClient()` as its library types it, written the way its README shows.
 */
import { GlideClient, GlideClusterClient } from '@valkey/valkey-glide';
import { Cluster, Redis } from 'ioredis';
import { Cluster as Cluster6, Redis as Redis6 } from 'ioredis6';
import { Cluster as ValkeyCluster, Redis as Valkey } from 'iovalkey';
import { createClient, createCluster, createSentinel } from 'redis';
import { createClient as createClient4, createCluster as createCluster4 } from 'redis4';
import { createClient as createClient6, createCluster as createCluster6 } from 'redis6';
import { bunRedisConnection, LockClient } from '../../src/index.js';

export async function everyClient(url: string): Promise<LockClient[]> {
  // node-redis 4: connect() resolves undefined, so the client is connected first, then passed.
  const cluster4 = createCluster4({ rootNodes: [{ url }] });
  await cluster4.connect();
  const client4 = createClient4({ url });
  await client4.connect();
  const sentinel = createSentinel({ name: 'primary', sentinelRootNodes: [{ host: '127.0.0.1', port: 26379 }] });
  const bun = { send: (command: string, args: string[]) => Promise.resolve([command, args]), connected: true };
  return [
    new LockClient(new Redis(url)),
    new LockClient(new Cluster([url])),
    new LockClient(new Redis6(url)),
    new LockClient(new Cluster6([url])),
    new LockClient(new Valkey(url)),
    new LockClient(new ValkeyCluster([url])),
    new LockClient(await createClient({ url }).connect()),
    new LockClient(await createCluster({ rootNodes: [{ url }] }).connect()),
    new LockClient(await sentinel.connect()),
    new LockClient(client4),
    new LockClient(cluster4),
    new LockClient(await createClient6({ url }).connect()),
    new LockClient(await createCluster6({ rootNodes: [{ url }] }).connect()),
    new LockClient(await GlideClient.createClient({ addresses: [{ host: '127.0.0.1', port: 6379 }] })),
    new LockClient(await GlideClusterClient.createClient({ addresses: [{ host: '127.0.0.1', port: 7000 }] })),
    new LockClient(bunRedisConnection(bun, url)),
    // @ts-expect-error not a Redis client
    new LockClient({ get: (key: string) => key }),
  ];
}
