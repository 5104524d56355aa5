/**
 * One worker process of `latchkey demo`: buys products under per-product locks.
 */
import { LockClient } from '../index.js';
import { connect } from './connect.js';

/** What a demo worker tells the parent. */
export type WorkerMessage =
  | { readonly type: 'order'; readonly product: string; readonly waitMs: number; readonly overlap: boolean }
  | { readonly type: 'error'; readonly message: string }
  | { readonly type: 'done'; readonly orders: number };

export interface WorkerSettings {
  readonly url: string;
  readonly namespace: string;
  readonly products: readonly string[];
  readonly deadline: number;
  /** false: the control run, the same purchases without the lock. */
  readonly lock: boolean;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * One shop process: buys random products until everything is sold or time is up. The stock
 * update is a deliberately naive read-check-sleep-write: only the per-product lock keeps two
 * processes from selling the same last item.
 */
export async function runWorker(settings: WorkerSettings, send: (message: WorkerMessage) => void): Promise<number> {
  const connection = await connect({ url: settings.url, timeout: 3_000 });
  connection.keepAlive();
  const redis = connection.client;
  const locks = new LockClient(redis, { keyPrefix: `${settings.namespace}lock:` });
  const stockKey = (product: string): string => `${settings.namespace}stock:${product}`;
  const guardKey = (product: string): string => `${settings.namespace}guard:${product}`;
  let orders = 0;
  let open = [...settings.products];
  try {
    while (open.length > 0 && Date.now() < settings.deadline) {
      const product = open[Math.floor(Math.random() * open.length)]!;
      const started = performance.now();
      const purchase = async (): Promise<boolean> => {
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
      };
      const bought = settings.lock
        ? await locks.getLock(`product:${product}:shopping`).withLock(purchase)
        : await purchase();
      if (bought) orders++;
      else open = open.filter((other) => other !== product);
    }
    return orders;
  } finally {
    await locks.shutdown();
    connection.close();
  }
}

/**
 * Entry of a worker process (`latchkey demo-worker <settings>`, forked by the demo). It stops
 * quietly when the demo tells it to (SIGTERM) or goes away (IPC disconnect); a failure goes to
 * the demo as one message, never as a stack trace on the terminal.
 */
export async function workerMain(settingsJson: string): Promise<number> {
  const quit = (): never => process.exit(0);
  process.on('SIGTERM', quit).on('SIGINT', quit).on('disconnect', quit);
  // Deno says no 'disconnect' when the demo dies without a word (SIGKILL): look for it every second.
  const parent = process.ppid;
  const watch = setInterval(() => {
    if (process.ppid !== parent || !isAlive(parent)) quit();
  }, 1_000);
  watch.unref();
  const send = (message: WorkerMessage): Promise<void> =>
    new Promise((resolve) => (process.send && process.connected ? process.send(message, () => resolve()) : resolve()));
  try {
    const orders = await runWorker(JSON.parse(settingsJson) as WorkerSettings, (message) => void send(message));
    // Its callback fires once every earlier message went out: then the channel may close.
    await send({ type: 'done', orders });
    return 0;
  } catch (error) {
    await send({ type: 'error', message: error instanceof Error ? error.message : String(error) });
    return 1;
  } finally {
    clearInterval(watch);
    process.off('disconnect', quit);
    process.disconnect?.();
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
