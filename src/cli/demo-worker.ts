import { Redis } from 'ioredis';
import { LockClient } from '../index.js';

/** What a demo worker tells the parent after each order attempt. */
export type WorkerMessage =
  | { readonly type: 'order'; readonly product: string; readonly waitMs: number; readonly overlap: boolean }
  | { readonly type: 'done'; readonly orders: number };

export interface WorkerSettings {
  readonly url: string;
  readonly namespace: string;
  readonly products: readonly string[];
  readonly deadline: number;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * One shop process: buys random products until everything is sold or time is up. The stock
 * update is a deliberately naive read-check-sleep-write: only the per-product lock keeps two
 * processes from selling the same last item.
 */
export async function runWorker(settings: WorkerSettings, send: (message: WorkerMessage) => void): Promise<void> {
  const redis = new Redis(settings.url, { maxRetriesPerRequest: 3 });
  const locks = new LockClient(redis, { keyPrefix: `${settings.namespace}lock:` });
  const stockKey = (product: string): string => `${settings.namespace}stock:${product}`;
  const guardKey = (product: string): string => `${settings.namespace}guard:${product}`;
  let orders = 0;
  let open = [...settings.products];
  try {
    while (open.length > 0 && Date.now() < settings.deadline) {
      const product = open[Math.floor(Math.random() * open.length)]!;
      const lock = locks.getLock(`product:${product}:shopping`);
      const started = performance.now();
      const bought = await lock.withLock(async () => {
        const waitMs = performance.now() - started;
        // Anyone else inside this critical section at the same time would be an overlap.
        const overlap = (await redis.incr(guardKey(product))) !== 1;
        const stock = Number(await redis.get(stockKey(product)));
        if (stock > 0) {
          await sleep(1 + Math.random() * 4); // "payment"
          await redis.set(stockKey(product), String(stock - 1));
        }
        await redis.decr(guardKey(product));
        if (stock > 0) send({ type: 'order', product, waitMs, overlap });
        return stock > 0;
      });
      if (bought) orders++;
      else open = open.filter((other) => other !== product);
    }
  } finally {
    send({ type: 'done', orders });
    await locks.shutdown();
    redis.disconnect();
  }
}
