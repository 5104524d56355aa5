/**
 * The worker processes, forked once and reused by every scenario.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { createWriteStream, type WriteStream } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { FromWorker, ToWorker, WorkerConfig } from '../protocol.js';
import { now } from '../rng.js';
import { onCleanup } from './cleanup.js';
import type { History } from './history.js';
import type { Register } from './register.js';

const WORKER_FILE = fileURLToPath(new URL('../worker/main.ts', import.meta.url));

export interface Worker {
  readonly index: number;
  readonly child: ChildProcess;
  /** Tasks asking for a primitive now (task id -> resource). */
  readonly waiting: Map<string, string>;
  /** Message types received in the current session (ready, drained, closed). */
  readonly seen: Set<string>;
  frozen: boolean;
}

/** Where the current scenario's worker messages and output go. */
interface Session {
  readonly register: Register;
  readonly history: History;
  readonly log: WriteStream;
}

/**
 * The worker processes: forked once through tsx with an IPC channel, then reused by every
 * scenario (one session each), since starting them costs more than a short scenario. A worker
 * that hangs or dies is replaced. Their output goes to the scenario's log file, not the terminal.
 */
export class Fleet {
  readonly #pool: Worker[] = [];
  #active: Worker[] = [];
  #session: Session | undefined;
  readonly #wakers = new Set<() => void>();
  readonly #killAll = onCleanup(() => {
    for (const worker of this.#pool) worker.child.kill('SIGKILL');
  });

  /** The workers of the current scenario. */
  get workers(): readonly Worker[] {
    return this.#active;
  }

  /** Configures `configs.length` workers for a scenario and waits until each is ready. */
  async begin(configs: readonly WorkerConfig[], register: Register, history: History, logPath: string): Promise<void> {
    this.#session = { register, history, log: createWriteStream(logPath) };
    for (const worker of this.#pool) if (exited(worker)) this.#replace(worker);
    while (this.#pool.length < configs.length) this.#pool.push(this.#spawn(this.#pool.length));
    this.#active = this.#pool.slice(0, configs.length);
    for (const [i, config] of configs.entries()) {
      const worker = this.#active[i]!;
      worker.seen.clear();
      worker.waiting.clear();
      this.#send(worker, { type: 'config', config });
    }
    await this.#all('ready', 30_000);
    const dead = this.#active.find((w) => !w.seen.has('ready'));
    if (dead) throw new Error(`worker ${dead.index} exited before it was ready`);
  }

  start(): void {
    for (const worker of this.#active) this.#send(worker, { type: 'start' });
  }

  freeze(worker: Worker): void {
    worker.frozen = true;
    worker.child.kill('SIGSTOP');
  }

  thaw(worker: Worker): void {
    worker.child.kill('SIGCONT');
    worker.frozen = false;
  }

  /** Ends every task; resolves with the workers that did not drain within `ms` (they hang). */
  async stop(ms: number): Promise<number[]> {
    for (const worker of this.#active) if (worker.frozen) this.thaw(worker);
    for (const worker of this.#active) this.#send(worker, { type: 'stop' });
    await this.#all('drained', ms).catch(() => undefined);
    return this.#active.filter((w) => !w.seen.has('drained')).map((w) => w.index);
  }

  /** Shuts the workers' clients down; a worker not done within `ms` is replaced by a fresh one. */
  async end(ms: number): Promise<void> {
    for (const worker of this.#active) this.#send(worker, { type: 'shutdown' });
    await this.#all('closed', ms).catch(() => undefined);
    // A worker that hung or did not close may still run old tasks: never reuse it.
    for (const worker of this.#active)
      if (!worker.seen.has('closed') || !worker.seen.has('drained')) this.#replace(worker);
    this.#active = [];
    const log = this.#session?.log;
    this.#session = undefined;
    await new Promise<void>((resolve) => (log ? log.end(resolve) : resolve()));
  }

  /** Kills every worker (the end of the run, or Ctrl-C). */
  kill(): Promise<void> {
    return this.#killAll();
  }

  #spawn(index: number): Worker {
    // --expose-gc: a soak measures the heap a worker keeps after a full collection.
    const execArgv = ['--import', 'tsx', '--expose-gc'];
    const child = fork(WORKER_FILE, [], { execArgv, stdio: ['ignore', 'pipe', 'pipe', 'ipc'] });
    const worker: Worker = { index, child, waiting: new Map(), seen: new Set(), frozen: false };
    const toLog = (chunk: Buffer): void => void this.#session?.log.write(chunk);
    child.stdout?.on('data', toLog);
    child.stderr?.on('data', toLog);
    child.on('message', (message: FromWorker) => this.#onMessage(worker, message));
    // A worker that dies mid-scenario fails it (it cannot drain when told); the history says how.
    child.on('exit', (code, signal) => {
      if (this.#active.includes(worker) && !worker.seen.has('closed'))
        this.#session?.history.add({
          t: now(),
          ev: 'note',
          text: `worker ${index} exited (${signal ?? `code ${code}`})`,
        });
      this.#wake();
    });
    child.on('error', (error) => {
      this.#session?.history.add({ t: now(), ev: 'note', text: `worker ${index}: ${error.message}` });
    });
    return worker;
  }

  /** Sends to a worker still connected; one that died is found by `#all` (it never answers). */
  #send(worker: Worker, message: ToWorker): void {
    if (worker.child.connected) worker.child.send(message);
  }

  #replace(worker: Worker): void {
    worker.child.kill('SIGKILL');
    this.#pool[worker.index] = this.#spawn(worker.index);
  }

  #onMessage(worker: Worker, message: FromWorker): void {
    const session = this.#session;
    if (!session) return;
    if (message.type === 'call') {
      const reply = session.register.call(worker.index, message.call);
      this.#send(worker, { type: 'reply', id: message.id, reply });
      return;
    }
    if (message.type === 'stats') {
      session.history.add({ t: now(), ev: 'stats', w: worker.index, ...message.stats });
      return;
    }
    if (message.type === 'event') {
      const { event } = message;
      if (event.kind === 'want') worker.waiting.set(event.task, event.res);
      if (event.kind === 'wait-end') worker.waiting.delete(event.task);
      session.history.add({ t: now(), ev: 'event', w: worker.index, ...event });
      return;
    }
    worker.seen.add(message.type);
    this.#wake();
  }

  #wake(): void {
    for (const wake of [...this.#wakers]) wake();
  }

  /** Resolves once every active worker sent `type` or exited (a dead one never will); rejects after `ms`. */
  #all(type: string, ms: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const check = (): void => {
        if (this.#active.every((w) => w.seen.has(type) || exited(w))) finish(resolve);
      };
      const timer = setTimeout(() => finish(() => reject(new Error(`workers not '${type}' within ${ms} ms`))), ms);
      const finish = (settle: () => void): void => {
        clearTimeout(timer);
        this.#wakers.delete(check);
        settle();
      };
      this.#wakers.add(check);
      check();
    });
  }
}

function exited(worker: Worker): boolean {
  return worker.child.exitCode !== null || worker.child.signalCode !== null;
}
