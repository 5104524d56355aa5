// Quick start: one line to take a lock, released in `finally`, renewed while the work runs.
import { Redis } from 'ioredis';
import { LockClient } from 'latchkey';

const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
const locks = new LockClient(redis);

const orderId = 'order:42';
const total = await locks.getLock(orderId).withLock(async (signal) => {
  // Only one process at a time gets here for order:42. `signal` aborts if the lock is ever lost.
  await new Promise((resolve) => setTimeout(resolve, 50));
  signal.throwIfAborted();
  return 99.5;
});
console.log(`charged ${total} for ${orderId}`);

await locks.shutdown();
redis.disconnect();
