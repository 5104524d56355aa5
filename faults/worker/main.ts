/**
 * One worker process of the fault-injection suite, forked by the runner and reused from scenario
 * to scenario (a session each). A session builds its own LockClient(s), runs several concurrent
 * tasks per resource (some sharing one handle, as a module-level
 * `const orders = locks.getLock('orders')` is shared by concurrent requests), and reports every
 * section to the runner's register. It never decides pass or fail: the runner's checker does.
 */
import { setMaxListeners, type EventEmitter } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { contextOf } from '../../src/client.js';
import { LockClient, type Lock } from '../../src/index.js';
import type { ResourceSpec, ToWorker, WorkerConfig, WorkerStats } from '../protocol.js';
import { Rng } from '../rng.js';
import { guardFor, type GuardTarget } from './guards.js';
import { RunnerLink } from './link.js';
import { watchLosses } from './loss-watch.js';
import { runTask, STOP, type Task } from './task.js';

const link = new RunnerLink();

const modeOf = (res: ResourceSpec, index: number): Task['mode'] => {
  if (res.primitive === 'semaphore') return 'permit';
  // One reader in four: with more, readers between them hold the lock all the time.
  if (res.primitive === 'read-write-lock') return index % 4 === 0 ? 'read' : 'write';
  return 'write';
};

/** One scenario in this process: its connections, clients and tasks. */
class Session {
  readonly #redises: Redis[] = [];
  readonly #clients: LockClient[] = [];
  readonly #stop = new AbortController();
  #tasks: Task[] = [];
  #running: Promise<unknown> | undefined;
  #unwatch = (): void => undefined;

  constructor(readonly config: WorkerConfig) {
    // Every task waits with this one signal (12 at once in renew-release): not a leak.
    setMaxListeners(1_000, this.#stop.signal);
  }

  async open(): Promise<void> {
    const { config } = this;
    for (const server of config.servers) this.#clients.push(new LockClient(this.#connect(server.url), config.client));
    await Promise.all(this.#redises.map((redis) => redis.ping()));
    // Loss announcements are checked against Redis where there is one server to ask.
    const direct = config.servers.length === 1 ? config.servers[0]?.direct : undefined;
    if (direct) {
      const lease = config.client.watchdogTimeout ?? 30_000;
      this.#unwatch = watchLosses(this.#connect(direct), link, Math.max(100, lease / 10));
    }
    const rng = new Rng(config.seed).fork(config.worker);
    this.#tasks = config.resources.flatMap((res, r) => {
      const handle = this.#handles(res);
      return Array.from({ length: res.tasks }, (_, i): Task => {
        const mode = modeOf(res, i);
        const style = res.styles[i % res.styles.length] ?? 'withLock';
        const id = `w${config.worker}.${res.name}.${i}`;
        return { id, res, mode, guard: guardFor(style, handle(i, mode)), rng: rng.fork(r * 1000 + i), link };
      });
    });
  }

  start(): void {
    this.#running = Promise.all(this.#tasks.map((task) => runTask(task, this.#stop.signal)));
    const every = this.config.statsEveryMs;
    if (every !== undefined) {
      const timer = setInterval(() => link.stats(this.#stats()), every);
      this.#stop.signal.addEventListener('abort', () => clearInterval(timer));
    }
  }

  async drain(): Promise<void> {
    this.#stop.abort(STOP);
    await this.#running;
  }

  /** What this process holds on to now (a soak samples it). */
  #stats(): WorkerStats {
    const emitters: EventEmitter[] = [...this.#redises, ...this.#clients];
    const listeners = emitters.reduce(
      (sum, emitter) => sum + emitter.eventNames().reduce((n, event) => n + emitter.listenerCount(event), 0),
      0,
    );
    const records = this.#clients.reduce((sum, client) => {
      const ctx = contextOf(client);
      return sum + ctx.holds.size + ctx.livenesses.size + ctx.watchdog.size + ctx.waiters.channelCount;
    }, 0);
    // What the heap keeps, not where its sawtooth happens to be: after a full collection.
    (globalThis as { gc?: () => void }).gc?.();
    return {
      heapUsed: process.memoryUsage().heapUsed,
      handles: process.getActiveResourcesInfo().length,
      listeners,
      records,
    };
  }

  /**
   * Shuts the clients down. `shutdown()` makes Redis calls, each bounded by commandTimeout: taking
   * much longer than that (an unreachable server) is reported, and the session moves on.
   */
  async close(): Promise<void> {
    const { config } = this;
    this.#unwatch();
    const boundMs = (config.client.commandTimeout ?? 10_000) + 2_000;
    const started = Date.now();
    const done = Promise.allSettled(this.#clients.map((client) => client.shutdown()));
    if ((await Promise.race([done, sleep(boundMs, 'late' as const)])) === 'late') {
      const res = config.resources[0]?.name ?? '';
      const message = `LockClient.shutdown() had not settled after ${Date.now() - started} ms (commandTimeout + 2 s)`;
      link.event({ kind: 'error', res, task: `w${config.worker}`, op: 'shutdown', error: { name: 'Hang', message } });
    }
    for (const redis of this.#redises) redis.disconnect();
  }

  #connect(url: string): Redis {
    const redis = new Redis(url);
    redis.on('error', () => undefined); // ioredis reconnects by itself; failures reach the callers
    this.#redises.push(redis);
    return redis;
  }

  /** A new handle of the resource (for a read-write lock, its side for `mode`). */
  #target(res: ResourceSpec, mode: Task['mode']): GuardTarget {
    const [client, ...others] = this.#clients;
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

  /**
   * Hands out the handles of one resource: task `i` below `res.shared` gets the process's shared
   * one (for a read-write lock, a side of one shared ReadWriteLock), the others one of their own.
   */
  #handles(res: ResourceSpec): (i: number, mode: Task['mode']) => GuardTarget {
    const shared = this.#target(res, 'write');
    const sharedRw = res.primitive === 'read-write-lock' ? shared.client.getReadWriteLock(res.name) : undefined;
    return (i, mode) => {
      if (i >= res.shared) return this.#target(res, mode);
      if (sharedRw) return { ...shared, lock: mode === 'read' ? sharedRw.readLock() : sharedRw.writeLock() };
      return shared;
    };
  }
}

let session: Session | undefined;

/** Runs a step of the session's life; a step that throws ends the process (the runner sees it exit). */
function step(work: () => Promise<void>, then: () => void): void {
  work().then(then, (error: unknown) => {
    console.error('worker failed:', error);
    process.exit(1);
  });
}

process.on('message', (message: ToWorker) => {
  switch (message.type) {
    case 'config': {
      const next = new Session(message.config);
      session = next;
      step(
        () => next.open(),
        () => link.send({ type: 'ready' }),
      );
      break;
    }
    case 'start':
      session?.start();
      break;
    case 'stop': {
      const current = session;
      if (current)
        step(
          () => current.drain(),
          () => link.send({ type: 'drained' }),
        );
      break;
    }
    case 'shutdown': {
      const current = session;
      session = undefined;
      if (current)
        step(
          () => current.close(),
          () => link.send({ type: 'closed' }),
        );
      break;
    }
    case 'reply':
      link.answered(message.id, message.reply);
      break;
  }
});
// The runner went away: nobody is left to report to or to stop us.
process.on('disconnect', () => setTimeout(() => process.exit(0), 100).unref());
