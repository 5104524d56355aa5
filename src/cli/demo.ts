import { fork, type ChildProcess } from 'node:child_process';
import { Redis } from 'ioredis';
import { randomId } from '../owner.js';
import type { WorkerMessage, WorkerSettings } from './demo-worker.js';
import { startRedisServer, type RedisProcess } from './redis-server.js';
import { formatMs, percentile } from './stats.js';

export interface DemoOptions {
  readonly workers: number;
  readonly products: number;
  readonly stock: number;
  readonly seconds: number;
}

interface Tally {
  orders: number;
  overlaps: number;
  readonly waits: number[];
  readonly sold: Map<string, number>;
}

/**
 * The source documents' shop made real: worker processes buy random products, each purchase
 * under the product's lock (`product:<id>:shopping`), and the summary proves no overselling and
 * no overlap. Uses REDIS_URL when set, else a private redis-server it starts and stops.
 */
export async function runDemo(options: DemoOptions, out: NodeJS.WriteStream = process.stdout): Promise<boolean> {
  const children: ChildProcess[] = [];
  let server: RedisProcess | undefined;
  const stopAll = async (): Promise<void> => {
    for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
    await server?.stop();
  };
  const onSigint = (): void => {
    out.write('\nInterrupted: stopping workers and the private redis-server\n');
    void stopAll().then(() => process.exit(130));
  };
  process.once('SIGINT', onSigint);
  try {
    let url = process.env.REDIS_URL;
    if (!url) {
      server = await startRedisServer();
      url = server.url;
      out.write(`Started a private redis-server on port ${server.port}\n`);
    } else {
      out.write(`Using REDIS_URL=${url}\n`);
    }
    const namespace = `latchkey-demo:${randomId(6)}:`;
    const products = Array.from({ length: options.products }, (_, i) => String(10100101 + i));
    const redis = new Redis(url);
    try {
      for (const product of products) await redis.set(`${namespace}stock:${product}`, String(options.stock));
      const tally = await runWorkers(
        options,
        { url, namespace, products, deadline: Date.now() + options.seconds * 1_000 },
        children,
        out,
      );
      const finalStock = await Promise.all(
        products.map(async (p) => Number(await redis.get(`${namespace}stock:${p}`))),
      );
      return printSummary(options, products, finalStock, tally, out);
    } finally {
      const keys = await redis.keys(`${namespace}*`);
      if (keys.length > 0) await redis.del(...keys);
      redis.disconnect();
    }
  } finally {
    process.off('SIGINT', onSigint);
    await stopAll();
  }
}

function runWorkers(
  options: DemoOptions,
  settings: WorkerSettings,
  children: ChildProcess[],
  out: NodeJS.WriteStream,
): Promise<Tally & { seconds: number }> {
  const tally: Tally = { orders: 0, overlaps: 0, waits: [], sold: new Map() };
  const started = Date.now();
  const total = options.products * options.stock;
  const progress = (): void => {
    const elapsed = (Date.now() - started) / 1_000;
    const line =
      `  ${tally.orders}/${total} items sold by ${options.workers} processes  ` +
      `${(tally.orders / Math.max(elapsed, 0.001)).toFixed(0)} orders/s  wait p99 ${formatMs(percentile(tally.waits, 99))}  ` +
      `overlaps ${tally.overlaps}  ${elapsed.toFixed(1)} s`;
    out.write(out.isTTY ? `\r${line}` : `${line}\n`);
  };
  const timer = setInterval(progress, out.isTTY ? 100 : 1_000);
  return new Promise((resolve, reject) => {
    let running = options.workers;
    for (let i = 0; i < options.workers; i++) {
      const child = fork(process.argv[1]!, ['demo-worker', JSON.stringify(settings)], {
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      });
      children.push(child);
      child.on('message', (message: WorkerMessage) => {
        if (message.type !== 'order') return;
        tally.orders++;
        tally.waits.push(message.waitMs);
        if (message.overlap) tally.overlaps++;
        tally.sold.set(message.product, (tally.sold.get(message.product) ?? 0) + 1);
      });
      child.once('exit', (code) => {
        if (code !== 0) {
          clearInterval(timer);
          reject(new Error(`demo worker ${i} exited with code ${code}`));
          return;
        }
        if (--running === 0) {
          clearInterval(timer);
          progress();
          out.write('\n');
          resolve({ ...tally, seconds: (Date.now() - started) / 1_000 });
        }
      });
    }
  });
}

function printSummary(
  options: DemoOptions,
  products: readonly string[],
  finalStock: readonly number[],
  tally: Tally & { seconds: number },
  out: NodeJS.WriteStream,
): boolean {
  const initial = options.products * options.stock;
  const remaining = finalStock.reduce((a, b) => a + b, 0);
  const negative = finalStock.filter((stock) => stock < 0).length;
  const consistent = initial - remaining === tally.orders;
  const perProduct = products.every((p, i) => options.stock - finalStock[i]! === (tally.sold.get(p) ?? 0));
  const ok = negative === 0 && consistent && perProduct && tally.overlaps === 0;
  out.write(
    [
      '',
      'Summary',
      `  orders             ${tally.orders} in ${tally.seconds.toFixed(1)} s by ${options.workers} processes`,
      `  stock              ${initial} at start, ${remaining} left, ${initial - remaining} sold` +
        ` (${consistent && perProduct ? 'equal to the orders' : 'DIFFERS FROM THE ORDERS'})`,
      `  negative stock     ${negative} products`,
      `  overlaps seen      ${tally.overlaps}`,
      `  lock wait          p50 ${formatMs(percentile(tally.waits, 50))}, p99 ${formatMs(percentile(tally.waits, 99))}`,
      `  acquisitions/s     ${(tally.orders / tally.seconds).toFixed(0)}`,
      `  verdict            ${ok ? 'OK: one process per product at a time, nothing oversold' : 'FAILED'}`,
      '',
    ].join('\n'),
  );
  return ok;
}
