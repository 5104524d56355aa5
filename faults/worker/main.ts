/**
 * One worker process of the fault-injection suite, forked by the runner. It builds its own
 * LockClient(s), runs several concurrent tasks per resource (some sharing one handle, as a
 * module-level `const orders = locks.getLock('orders')` would be shared), and reports every
 * section to the runner's register. It never decides pass or fail: the runner's checker does.
 */
import { Redis } from 'ioredis';
import { LockClient, type Lock } from '../../src/index.js';
import type { ResourceSpec, ToWorker, WorkerConfig } from '../protocol.js';
import { Rng } from '../rng.js';
import { guardFor, type GuardTarget } from './guards.js';
import { RunnerLink } from './link.js';
import { watchLosses } from './loss-watch.js';
import { runTask, STOP, type Task } from './task.js';

const link = new RunnerLink();
const stop = new AbortController();
const redises: Redis[] = [];
const clients: LockClient[] = [];
let tasks: Task[] = [];
let running: Promise<unknown> | undefined;
let unwatch = (): void => undefined;

const connect = (url: string): Redis => {
  const redis = new Redis(url);
  redis.on('error', () => undefined); // ioredis reconnects by itself; failures reach the callers
  redises.push(redis);
  return redis;
};

/** A new handle of the resource (for a read-write lock, its side for `mode`). */
function target(res: ResourceSpec, mode: Task['mode']): GuardTarget {
  const [client, ...others] = clients;
  if (!client) throw new Error('no client');
  const base = { client, ...(res.waitTimeMs === undefined ? {} : { waitTime: res.waitTimeMs }) };
  switch (res.primitive) {
    case 'lock':
      return { ...base, lock: client.getLock(res.name) };
    case 'fair-lock':
      return { ...base, lock: client.getFairLock(res.name) };
    case 'spin-lock':
      return { ...base, lock: client.getSpinLock(res.name) };
    case 'fenced-lock': {
      const fenced = client.getFencedLock(res.name);
      return { ...base, lock: fenced, fenced };
    }
    case 'read-write-lock': {
      const rw = client.getReadWriteLock(res.name);
      return { ...base, lock: mode === 'read' ? rw.readLock() : rw.writeLock() };
    }
    case 'red-lock': {
      const members: Lock[] = [client, ...others].map((c) => c.getLock(res.name));
      return { ...base, lock: client.getRedLock(...members) };
    }
    case 'semaphore':
      return { ...base, semaphore: client.getSemaphore(res.name) };
    case 'none':
      return base;
  }
}

const modeOf = (res: ResourceSpec, index: number): Task['mode'] => {
  if (res.primitive === 'semaphore') return 'permit';
  if (res.primitive === 'read-write-lock') return index % 2 === 0 ? 'read' : 'write';
  return 'write';
};

/**
 * Hands out the handles of one resource: task `i` below `res.shared` gets the process's shared one
 * (for a read-write lock, a side of one shared ReadWriteLock), the others a handle of their own.
 */
function handles(res: ResourceSpec): (i: number, mode: Task['mode']) => GuardTarget {
  const shared = target(res, 'write');
  const sharedRw = res.primitive === 'read-write-lock' ? shared.client.getReadWriteLock(res.name) : undefined;
  return (i, mode) => {
    if (i >= res.shared) return target(res, mode);
    if (sharedRw) return { ...shared, lock: mode === 'read' ? sharedRw.readLock() : sharedRw.writeLock() };
    return shared;
  };
}

function buildTasks(config: WorkerConfig): Task[] {
  const rng = new Rng(config.seed).fork(config.worker);
  return config.resources.flatMap((res, r) => {
    const handle = handles(res);
    return Array.from({ length: res.tasks }, (_, i): Task => {
      const mode = modeOf(res, i);
      const style = res.styles[i % res.styles.length] ?? 'withLock';
      const id = `w${config.worker}.${res.name}.${i}`;
      return { id, res, mode, guard: guardFor(style, handle(i, mode)), rng: rng.fork(r * 1000 + i), link };
    });
  });
}

async function configure(config: WorkerConfig): Promise<void> {
  for (const server of config.servers) clients.push(new LockClient(connect(server.url), config.client));
  await Promise.all(redises.map((redis) => redis.ping()));
  const direct = config.servers.length === 1 ? config.servers[0]?.direct : undefined;
  if (direct) {
    const lease = config.client.watchdogTimeout ?? 30_000;
    unwatch = watchLosses(connect(direct), link, Math.max(100, lease / 10));
  }
  tasks = buildTasks(config);
}

async function drain(): Promise<void> {
  stop.abort(STOP);
  await running;
  link.send({ type: 'drained' });
}

async function shutdown(): Promise<void> {
  unwatch();
  await Promise.allSettled(clients.map((client) => client.shutdown()));
  for (const redis of redises) redis.disconnect();
  link.send({ type: 'closed' });
  process.disconnect();
}

process.on('message', (message: ToWorker) => {
  switch (message.type) {
    case 'config':
      configure(message.config).then(
        () => link.send({ type: 'ready' }),
        (error: unknown) => {
          console.error('worker could not start:', error);
          process.exit(1);
        },
      );
      break;
    case 'start':
      running = Promise.all(tasks.map((task) => runTask(task, stop.signal)));
      break;
    case 'stop':
      void drain();
      break;
    case 'shutdown':
      void shutdown();
      break;
    case 'reply':
      link.answered(message.id, message.reply);
      break;
  }
});
// The runner went away: nobody is left to report to or to stop us.
process.on('disconnect', () => setTimeout(() => process.exit(0), 100).unref());
