import { fork, type ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';
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
  frozen: boolean;
}

/**
 * The worker processes of one scenario: forked through tsx with an IPC channel, their register
 * calls answered and their events recorded. Their output goes to `logPath`, not the terminal.
 */
export class Fleet {
  readonly #waiters = new Map<string, Set<() => void>>();
  /** Message types each worker has sent (ready, drained, closed). */
  readonly #seenTypes = new Map<Worker, Set<string>>();
  readonly #kill: () => Promise<void>;

  private constructor(
    readonly workers: readonly Worker[],
    kill: () => Promise<void>,
  ) {
    this.#kill = kill;
  }

  static async start(
    configs: readonly WorkerConfig[],
    register: Register,
    history: History,
    logPath: string,
  ): Promise<Fleet> {
    const log = createWriteStream(logPath);
    const workers: Worker[] = [];
    const kill = onCleanup(() => {
      for (const worker of workers) worker.child.kill('SIGKILL');
      log.end();
    });
    const fleet = new Fleet(workers, kill);
    for (const config of configs) {
      const child = fork(WORKER_FILE, [], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'pipe', 'pipe', 'ipc'] });
      child.stdout?.pipe(log, { end: false });
      child.stderr?.pipe(log, { end: false });
      const worker: Worker = { index: config.worker, child, waiting: new Map(), frozen: false };
      workers.push(worker);
      child.on('message', (message: FromWorker) => fleet.#onMessage(worker, message, register, history));
      child.send({ type: 'config', config } satisfies ToWorker);
    }
    try {
      await fleet.#all('ready', 30_000);
    } catch (error) {
      await kill();
      throw error;
    }
    return fleet;
  }

  start(): void {
    for (const worker of this.workers) worker.child.send({ type: 'start' } satisfies ToWorker);
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
    for (const worker of this.workers) if (worker.frozen) this.thaw(worker);
    for (const worker of this.workers) worker.child.send({ type: 'stop' } satisfies ToWorker);
    return this.#all('drained', ms).then(
      () => [],
      () => this.workers.filter((w) => !this.#seen(w, 'drained')).map((w) => w.index),
    );
  }

  /** Shuts the workers' clients down and lets them exit; kills whatever is left after `ms`. */
  async shutdown(ms: number): Promise<void> {
    for (const worker of this.workers) worker.child.send({ type: 'shutdown' } satisfies ToWorker);
    const exited = this.workers.map(
      (w) =>
        new Promise<void>((resolve) => (w.child.exitCode !== null ? resolve() : w.child.once('exit', () => resolve()))),
    );
    const timer = setTimeout(() => void this.#kill(), ms);
    await Promise.all(exited);
    clearTimeout(timer);
    await this.#kill();
  }

  kill(): Promise<void> {
    return this.#kill();
  }

  #seen(worker: Worker, type: string): boolean {
    return this.#seenTypes.get(worker)?.has(type) ?? false;
  }

  #onMessage(worker: Worker, message: FromWorker, register: Register, history: History): void {
    if (message.type === 'call') {
      const reply = register.call(worker.index, message.call);
      if (worker.child.connected) worker.child.send({ type: 'reply', id: message.id, reply } satisfies ToWorker);
      return;
    }
    if (message.type === 'event') {
      const { event } = message;
      if (event.kind === 'want') worker.waiting.set(event.task, event.res);
      if (event.kind === 'wait-end') worker.waiting.delete(event.task);
      history.add({ t: now(), ev: 'event', w: worker.index, ...event });
      return;
    }
    let seen = this.#seenTypes.get(worker);
    if (!seen) this.#seenTypes.set(worker, (seen = new Set()));
    seen.add(message.type);
    for (const wake of this.#waiters.get(message.type) ?? []) wake();
  }

  /** Resolves once every worker sent `type`; rejects after `ms` or when one exits first. */
  #all(type: string, ms: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const check = (): void => {
        if (this.workers.every((w) => this.#seen(w, type))) return finish(resolve);
        const gone = this.workers.find((w) => w.child.exitCode !== null && !this.#seen(w, type));
        if (gone)
          finish(() => reject(new Error(`worker ${gone.index} exited (${gone.child.exitCode}) before '${type}'`)));
      };
      const timer = setTimeout(() => finish(() => reject(new Error(`workers not '${type}' within ${ms} ms`))), ms);
      const finish = (settle: () => void): void => {
        clearTimeout(timer);
        this.#waiters.get(type)?.delete(check);
        for (const w of this.workers) w.child.off('exit', check);
        settle();
      };
      let set = this.#waiters.get(type);
      if (!set) this.#waiters.set(type, (set = new Set()));
      set.add(check);
      for (const w of this.workers) w.child.on('exit', check);
      check();
    });
  }
}
