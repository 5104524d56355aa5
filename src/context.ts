/**
 * ClientContext: what a primitive sees of its LockClient (never its Redis client), and the
 * serializer that runs one owner's calls on one key one after the other.
 */
import type { Hold } from './engine/lock-core.js';
import type { Livenesses } from './engine/liveness.js';
import type { ServerChecks, Warn } from './engine/server-checks.js';
import type { Waiters } from './engine/waiters.js';
import type { Watchdog } from './engine/watchdog.js';
import type { LossDetector } from './loss/loss-detector.js';
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
  /** Finds lost holds between renewals (by push where it can), and sends the renewals. */
  readonly loss: LossDetector;
  /** Every hold of this client, by key and owner. */
  readonly holds: Map<string, Hold>;
  /** Runs `call` after every earlier call with the same `key` has settled. */
  serially<T>(key: string, call: () => SerialCall<T>): Promise<T>;
  /** Throws ShutDownError once the client was shut down. */
  assertOpen(): void;
  /** Aborts with the ShutDownError when the client shuts down: ends the waits that sleep. */
  readonly closing: AbortSignal;
  /** Tells the user, once per code, what weakens a guarantee (the client's `warning` event). */
  readonly warn: Warn;
  /** Checks each server once for settings that weaken the locks (eviction). */
  readonly servers: ServerChecks;
}

/** A `serially()` over a map of the last call per key. */
export function createSerializer(): ClientContext['serially'] {
  const last = new Map<string, Promise<unknown>>();
  const track = (key: string, settled: Promise<unknown>): void => {
    last.set(key, settled);
    const done = (): void => {
      if (last.get(key) === settled) last.delete(key);
    };
    settled.then(done, done);
  };
  const start = <T>(call: () => SerialCall<T>): SerialCall<T> => {
    try {
      return call();
    } catch (error) {
      return { result: Promise.reject(error), settled: Promise.resolve() };
    }
  };
  return <T>(key: string, call: () => SerialCall<T>): Promise<T> => {
    const before = last.get(key);
    if (before === undefined) {
      // The usual case (every acquisition is a new owner): nothing to wait for.
      const current = start(call);
      track(key, current.settled);
      return current.result;
    }
    let settle!: () => void;
    track(key, new Promise<void>((resolve) => (settle = resolve)));
    const go = (): Promise<T> => {
      const current = start(call);
      current.settled.then(settle, settle);
      return current.result;
    };
    return before.then(go, go);
  };
}
