import { createSentinel } from 'redis';
import { LockClient } from 'latchkey';

// node-redis v5 Sentinel: it follows the master by itself after a failover.
const sentinelRootNodes = (process.env.REDIS_SENTINELS ?? '127.0.0.1:26379').split(',').map((address) => {
  const [host, port] = address.split(':');
  return { host: host!, port: Number(port) };
});
const sentinel = await createSentinel({
  name: process.env.REDIS_SENTINEL_NAME ?? 'mymaster',
  sentinelRootNodes,
}).connect();
const locks = new LockClient(sentinel);

await locks.getLock('order:42').withLock(() => console.log('held order:42 on the Sentinel master through node-redis'));

await locks.shutdown();
await sentinel.close();
