import { Redis } from 'ioredis';
import { LockClient } from 'latchkey';

const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
const locks = new LockClient(redis);

async function chargeOrder(id: number, signal: AbortSignal): Promise<number> {
  await new Promise((resolve) => setTimeout(resolve, 50)); // your work: a payment, a database update
  signal.throwIfAborted(); // stop before writing anything if the lock was lost meanwhile
  return 99.5;
}

// One process at a time, across every process and machine, gets in here for order 42.
// The lock is renewed while the work runs; `signal` aborts if it is ever lost.
const total = await locks.getLock('order:42').withLock((signal) => chargeOrder(42, signal));
console.log(`charged ${total} for order:42`);

await locks.shutdown(); // stops renewals and subscriptions; locks still held expire by themselves
redis.disconnect();
