/**
 * `latchkey demo`: starts the worker processes (and a private redis-server without REDIS_URL),
 * shows progress, prints the summary, cleans up.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { randomId } from '../owner.js';
import { connect, type Connection } from './connect.js';
import { printSummary, startProgress, type Tally } from './demo-summary.js';
import type { WorkerMessage, WorkerSettings } from './demo-worker.js';
import { CliError, EXIT, signalExitCode } from './exit.js';
import { signalChild, startRedisServer, type RedisProcess } from './redis-server.js';

export interface DemoOptions {
  readonly workers: number;
  readonly products: number;
  readonly stock: number;
  readonly seconds: number;
  /** false: the control run, without the lock, to show the overlaps it prevents. */
  readonly lock: boolean;
}

/** Workers seen to exit (their 'exit' event: Deno sets `signalCode` as soon as a signal is sent). */
const ended = new WeakSet<ChildProcess>();
const alive = (child: ChildProcess): boolean => !ended.has(child);

/** SIGTERM, then SIGKILL for whoever is still there after `graceMs`. */
async function stopWorkers(children: readonly ChildProcess[], graceMs = 2_000): Promise<void> {
  const running = children.filter(alive);
  const exited = running.map((child) => once(child, 'exit'));
  for (const child of running) signalChild(child, 'SIGTERM');
  const timer = setTimeout(() => running.filter(alive).forEach((child) => signalChild(child, 'SIGKILL')), graceMs);
  await Promise.all(exited);
  clearTimeout(timer);
}

/** Deletes what the demo wrote on a user's Redis: SCAN of its own random namespace on every primary, never KEYS. */
async function removeNamespace(connection: Connection, namespace: string): Promise<void> {
  for (const node of connection.primaries()) {
    let cursor = '0';
    do {
      const [next, keys] = await node.scan(cursor, 'MATCH', `${namespace}*`, 'COUNT', 1_000);
      cursor = next;
      // One key per call: on a Cluster the namespace's keys live in many slots.
      for (const key of keys) await node.del(key);
    } while (cursor !== '0');
  }
}

/**
 * The shop demo: worker processes buy random products, each purchase under the product's lock
 * (`product:<id>:shopping`), and the summary proves no overselling and no overlap. Uses
 * REDIS_URL when set, else a private redis-server it starts and stops. SIGINT and SIGTERM stop
 * every worker (and the private server) and end the demo with 128 + the signal's number.
 */
export async function runDemo(options: DemoOptions, out: NodeJS.WriteStream = process.stdout): Promise<number> {
  const children: ChildProcess[] = [];
  const stopping = new AbortController();
  let server: RedisProcess | undefined;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (stopping.signal.aborted) return;
    out.write(`\n${signal === 'SIGINT' ? 'Interrupted' : 'Terminated'}: stopping the workers\n`);
    stopping.abort(signal);
  };
  process.on('SIGINT', onSignal).on('SIGTERM', onSignal);
  let connection: Connection | undefined;
  const namespace = `latchkey-demo:${randomId(6)}:`;
  try {
    let url = process.env.REDIS_URL;
    if (url) {
      out.write(`Using REDIS_URL=${url} (keys under ${namespace}*, removed afterwards)\n`);
    } else {
      server = await startRedisServer([], [], { detached: true, stopWithParent: true });
      url = server.url;
      out.write(`Started a private redis-server on port ${server.port}\n`);
    }
    connection = await connect({ url, timeout: 3_000 });
    const products = Array.from({ length: options.products }, (_, i) => String(10100101 + i));
    for (const product of products) await connection.client.set(`${namespace}stock:${product}`, options.stock);
    if (!options.lock) out.write('Control run: the same purchases WITHOUT the lock\n');
    const settings: WorkerSettings = {
      url,
      namespace,
      products,
      deadline: Date.now() + options.seconds * 1_000,
      lock: options.lock,
    };
    const tally = await runWorkers(options, settings, children, stopping.signal, out);
    if (stopping.signal.aborted) return signalExitCode(stopping.signal.reason as NodeJS.Signals);
    const left = await Promise.all(
      products.map(async (p) => Number(await connection!.client.get(`${namespace}stock:${p}`))),
    );
    const ok = printSummary(options, products, left, tally, out);
    return ok || !options.lock ? EXIT.ok : EXIT.failure;
  } finally {
    await stopWorkers(children);
    // A private server goes whole; on a user's Redis only the demo's own keys go.
    if (connection && !server) await removeNamespace(connection, namespace).catch(() => undefined);
    connection?.close();
    await server?.stop();
    process.off('SIGINT', onSignal).off('SIGTERM', onSignal);
  }
}

/** Forks the workers and tallies their orders until all are done, one fails, or the demo is stopped. */
function runWorkers(
  options: DemoOptions,
  settings: WorkerSettings,
  children: ChildProcess[],
  stop: AbortSignal,
  out: NodeJS.WriteStream,
): Promise<Tally> {
  const tally: Tally = { orders: 0, overlaps: 0, waits: [], sold: new Map(), seconds: 0 };
  const progress = startProgress(options, tally, out);
  return new Promise<Tally>((resolve, reject) => {
    let running = options.workers;
    const finish = (error?: Error): void => {
      tally.seconds = progress.stop();
      if (error) reject(error);
      else resolve(tally);
    };
    stop.addEventListener('abort', () => finish(), { once: true });
    for (let i = 0; i < options.workers; i++) {
      // detached: Ctrl-C reaches the demo alone, which stops the workers in order (no stray errors).
      const child = fork(process.argv[1]!, ['demo-worker', JSON.stringify(settings)], {
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
        detached: true,
      });
      children.push(child);
      child.once('exit', () => ended.add(child));
      let failure: string | undefined;
      child.on('message', (message: WorkerMessage) => {
        if (message.type === 'error') failure = message.message;
        if (message.type !== 'order') return;
        tally.orders++;
        tally.waits.push(message.waitMs);
        if (message.overlap) tally.overlaps++;
        tally.sold.set(message.product, (tally.sold.get(message.product) ?? 0) + 1);
      });
      child.once('exit', (code) => {
        if (stop.aborted) return;
        if (code !== 0)
          finish(new CliError(`demo worker ${i + 1} failed: ${failure ?? `exit code ${code}`}`, EXIT.failure));
        else if (--running === 0) finish();
      });
    }
  });
}
