import { Redis } from 'ioredis';
import { LockClient } from 'latchkey';

// ioredis asks the Sentinels where the master is. `failoverDetector: true` makes it move to a new
// master the moment the Sentinels announce it (without it, latchkey refuses the client: it would
// go on granting locks on the old master for seconds after a failover).
const sentinels = (process.env.REDIS_SENTINELS ?? '127.0.0.1:26379').split(',').map((address) => {
  const [host, port] = address.split(':');
  return { host: host!, port: Number(port) };
});
const redis = new Redis({ sentinels, name: process.env.REDIS_SENTINEL_NAME ?? 'mymaster', failoverDetector: true });
const locks = new LockClient(redis);

await locks.getLock('order:42').withLock(() => console.log('held order:42 on the Sentinel master'));

await locks.shutdown();
redis.disconnect();
