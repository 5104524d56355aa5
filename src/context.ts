import type { Hold } from './engine/key-lock.js';
import type { Livenesses } from './engine/liveness.js';
import type { Waiters } from './engine/waiters.js';
import type { Watchdog } from './engine/watchdog.js';
import type { ResolvedOptions } from './options.js';
import type { RedisConnection } from './redis/connection.js';
import type { ScriptRunner } from './redis/script-runner.js';

/** One call in `serially()`: what its caller gets, and what the next call waits for. */
export interface SerialCall<T> {
  readonly result: Promise<T>;
  readonly settled: Promise<unknown>;
}

/** What a primitive needs from its client: the internals of one LockClient, never its Redis client. */
export interface ClientContext {
  readonly clientId: string;
  readonly options: ResolvedOptions;
  readonly connection: RedisConnection;
  readonly run: ScriptRunner;
  readonly waiters: Waiters;
  readonly watchdog: Watchdog;
  readonly livenesses: Livenesses;
  /** Every hold of this client, by key and owner. */
  readonly holds: Map<string, Hold>;
  /** Runs `call` after every earlier call with the same `key` has settled. */
  serially<T>(key: string, call: () => SerialCall<T>): Promise<T>;
  /** Throws ShutDownError once the client was shut down. */
  assertOpen(): void;
}

/** A `serially()` over a map of the last call per key. */
export function createSerializer(): ClientContext['serially'] {
  const last = new Map<string, Promise<unknown>>();
  return <T>(key: string, call: () => SerialCall<T>): Promise<T> => {
    let settle!: () => void;
    const settled = new Promise<void>((resolve) => (settle = resolve));
    const before = last.get(key);
    last.set(key, settled);
    void settled.then(() => {
      if (last.get(key) === settled) last.delete(key);
    });
    const start = (): Promise<T> => {
      try {
        const current = call();
        void current.settled.then(settle, settle);
        return current.result;
      } catch (error) {
        settle();
        return Promise.reject(error);
      }
    };
    return before === undefined ? start() : before.then(start);
  };
}
