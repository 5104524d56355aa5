import type { Holds } from './engine/holds.js';
import type { Waiters } from './engine/waiters.js';
import type { Watchdog } from './engine/watchdog.js';
import type { ResolvedOptions } from './options.js';
import type { RedisConnection } from './redis/connection.js';
import type { ScriptRunner } from './redis/script-runner.js';

/** What a primitive needs from its client: the internals of one LockClient, never its Redis client. */
export interface ClientContext {
  readonly clientId: string;
  readonly options: ResolvedOptions;
  readonly connection: RedisConnection;
  readonly run: ScriptRunner;
  readonly waiters: Waiters;
  readonly watchdog: Watchdog;
  readonly holds: Holds;
  /** Rejects when the client was shut down. */
  assertOpen(): void;
  /** False once the client was shut down. */
  isOpen(): boolean;
}
