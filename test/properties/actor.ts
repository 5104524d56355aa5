import type { LockClient } from '../../src/index.js';

/**
 * One owner for a model-based run: a `LockClient.scope()` kept open, running the calls handed to
 * it one after another inside the scope (AsyncLocalStorage follows the loop, so every call made
 * from a job is this scope's owner). Redisson's "one thread", done the Node way.
 */
export class Actor {
  readonly #jobs: (() => Promise<void>)[] = [];
  #wake: (() => void) | undefined;
  #closed = false;
  readonly done: Promise<void>;

  constructor(client: LockClient) {
    this.done = client.scope(async () => {
      while (!this.#closed) {
        const job = this.#jobs.shift();
        if (job) await job();
        else await new Promise<void>((resolve) => (this.#wake = resolve));
      }
    });
  }

  /** Runs `fn` as this owner. */
  run<T>(fn: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#jobs.push(() => fn().then(resolve, reject));
      this.#poke();
    });
  }

  close(): Promise<void> {
    this.#closed = true;
    this.#poke();
    return this.done;
  }

  #poke(): void {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }
}
