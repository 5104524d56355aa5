/**
 * LockLease: what `acquire()` returns, a held lock as an AsyncDisposable with its signal.
 */
import type { HeldLock } from './engine/lock-core.js';

/**
 * A held lock, returned by `acquire()`. Dispose it (`await using lease = await lock.acquire()`)
 * or call `release()` to unlock.
 */
export class LockLease implements AsyncDisposable {
  /** The fencing token, for locks that issue one. */
  readonly token: bigint | undefined;
  readonly #held: HeldLock;
  readonly #release: () => Promise<void>;
  #released: Promise<void> | undefined;

  /** @internal Made by `acquire()`. */
  constructor(held: HeldLock, release: () => Promise<void>) {
    this.#held = held;
    this.token = held.token;
    this.#release = release;
  }

  /** Aborts with `LockLostError` the moment the lock is known to be lost. */
  get signal(): AbortSignal {
    return this.#held.liveness.signal;
  }

  /**
   * Releases this hold; a second call returns the first one's outcome. Rejects with
   * `LockLostError` when the lock was lost before (the work it guarded was not protected).
   */
  release(): Promise<void> {
    this.#released ??= this.#release();
    return this.#released;
  }

  /** `await using`: releases at the end of the block. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.release();
  }
}
