import { createClient } from 'redis';
import { LockClient } from 'latchkey';

// node-redis v4+: connect first, then hand the client over.
const redis = await createClient({ url: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379' }).connect();
const locks = new LockClient(redis);

await locks.getLock('order:42').withLock(() => console.log('held order:42 through node-redis'));

await locks.shutdown();
await redis.quit();
