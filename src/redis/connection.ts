/**
 * The whole contract between latchkey and a Redis client: run a Lua script and listen on a
 * channel. Adapters (ioredis, node-redis) implement it; lock logic sees nothing else.
 */

/** A Lua script with its SHA1, as generated from `src/scripts/**.lua`. */
export interface LuaScript {
  readonly name: string;
  readonly source: string;
  readonly sha: string;
}

/** A script argument: numbers are sent as their decimal string. */
export type ScriptArg = string | number;

/** A reply of a Lua script as Redis returns it (integers, bulk strings, arrays, nil). */
export type ScriptReply = null | number | string | ScriptReply[];

export interface RedisConnection {
  /**
   * Runs a script by EVALSHA, falling back to EVAL on NOSCRIPT. Rejects with
   * `RedisUnavailableError` when Redis cannot be reached, or with Redis' own reply error.
   */
  evalScript(script: LuaScript, keys: readonly string[], args: readonly ScriptArg[]): Promise<ScriptReply>;

  /**
   * Subscribes `listener` to `channel`. Resolves once Redis confirmed the subscription, with a
   * function that removes this listener (and unsubscribes when it was the last one).
   */
  subscribe(channel: string, listener: (message: string) => void): Promise<() => Promise<void>>;

  /**
   * Groups keys that one script may touch together: every key of a batch must map to one group.
   * A single server answers one group for all keys; a Cluster answers the key's hash slot.
   */
  batchGroup(key: string): string;

  /** Releases what the adapter opened itself (its subscriber connection); never the user's client. */
  close(): Promise<void>;
}
