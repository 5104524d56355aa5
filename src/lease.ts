import type { LockLease } from './lock.js';

/** A held lock as an AsyncDisposable: `await using lease = await lock.acquire()`. */
export class Lease implements LockLease {
  #released: Promise<void> | undefined;

  constructor(
    readonly signal: AbortSignal,
    private readonly releaseOnce: () => Promise<void>,
    readonly token?: bigint,
  ) {}

  release(): Promise<void> {
    this.#released ??= this.releaseOnce();
    return this.#released;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.release();
  }
}
