import { Cluster } from 'ioredis';
import { LockClient } from 'latchkey';

// Any reachable nodes of the Cluster; ioredis finds the rest.
const nodes = (process.env.REDIS_CLUSTER ?? 'redis://127.0.0.1:7000,redis://127.0.0.1:7001').split(',');
const cluster = new Cluster(nodes);
const locks = new LockClient(cluster);

// Every key of one lock carries the {name} hash tag, so its scripts run on one node;
// locks of different names spread over the slots.
await locks.getLock('order:42').withLock(() => console.log('held order:42 on the Cluster'));

await locks.shutdown();
cluster.disconnect();
