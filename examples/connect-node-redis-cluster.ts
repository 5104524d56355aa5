import { createCluster } from 'redis';
import { LockClient } from 'latchkey';

// node-redis v4+ Cluster: any reachable nodes; connect first, then hand the client over.
const rootNodes = (process.env.REDIS_CLUSTER ?? 'redis://127.0.0.1:7000').split(',').map((url) => ({ url }));
const cluster = await createCluster({ rootNodes }).connect();
const locks = new LockClient(cluster);

await locks.getLock('order:42').withLock(() => console.log('held order:42 on the Cluster through node-redis'));

await locks.shutdown();
await cluster.close();
