/**
 * The whole contract between latchkey and a Redis client: run a Lua script and listen on a
 * channel. Adapters (ioredis, node-redis) implement it; lock logic sees nothing else.
 */

/** A Lua script with its SHA1, as generated from `src/scripts/**.lua`. */
export interface LuaScript {
  /** `<primitive>/<verb>`, as the file is named under src/scripts. */
  readonly name: string;
  /** The Lua source, with its `lib/` includes in place. */
  readonly source: string;
  /** SHA1 of the source, for EVALSHA. */
  readonly sha: string;
  /**
   * The form a Cluster runs, when it differs: it first checks that its slot is not migrating (a
   * script stopped half-way by a key that moved would leave a write half done). A server whose
   * slots never move runs `source` itself.
   */
  readonly cluster?: LuaScript;
}

/** A script argument: numbers are sent as their decimal string. */
export type ScriptArg = string | number;

/** A reply of a Lua script as Redis returns it (integers, bulk strings, arrays, nil). */
export type ScriptReply = null | number | string | ScriptReply[];

/** Hears one channel. */
export interface ChannelListener {
  /** A message published on the channel. */
  message(text: string): void;
  /**
   * The subscriber connection came back after it was lost and the channel is subscribed again:
   * messages published meanwhile were lost, so whoever waits for one should look again.
   */
  reconnected(): void;
}

/**
 * The port a Redis client is adapted to (the ioredis and node-redis adapters implement it; so may
 * a connection of your own, passed to `new LockClient()`).
 */
export interface RedisConnection {
  /**
   * Runs a script by EVALSHA, falling back to EVAL on NOSCRIPT. Rejects with
   * `RedisUnavailableError` when Redis cannot be reached, or with Redis' own reply error.
   */
  evalScript(script: LuaScript, keys: readonly string[], args: readonly ScriptArg[]): Promise<ScriptReply>;

  /**
   * Subscribes `listener` to `channel` on a connection of the adapter's own that is ready (never
   * one still connecting), and keeps it subscribed across reconnects. Resolves once Redis
   * confirmed the subscription, with a function that removes this listener (and unsubscribes
   * when it was the last one).
   */
  subscribe(channel: string, listener: ChannelListener): Promise<() => Promise<void>>;

  /**
   * True for a Redis Cluster, whose slots may move between nodes while in use: scripts are then
   * sent in their `cluster` form. Left out: one server (or Sentinel), whose keys never move.
   */
  readonly cluster?: boolean;

  /**
   * Groups keys that one script may touch together: every key of a batch must map to one group.
   * A single server answers one group for all keys; a Cluster answers the key's hash slot.
   */
  batchGroup(key: string): string;

  /**
   * Opens a connection of the adapter's own for key tracking (server-pushed loss detection, see
   * docs/loss-detection.md), named `name` where the server allows `CLIENT SETNAME` (a refused name
   * must not fail the connection). Undefined where the deployment has none that serves every key
   * (a Cluster): loss is then found by renewal alone, and the client says so once. Optional: an
   * adapter, or a connection of your own, may leave it out. `signal` aborts when the client shuts
   * down: a connection still connecting then closes (and the promise rejects), so that nothing
   * reconnects to a server that went away.
   */
  openTrackingLink?(name: string, signal: AbortSignal): Promise<TrackingLink> | undefined;

  /**
   * Redis' `WAIT replicas timeout` on the connection that serves `key` (the one its scripts were
   * sent on), so that it covers what they wrote: resolves with how many replicas acknowledged.
   * Needed only for the `replicaAcks` option. Rejects with `CommandRefusedError` when Redis refuses
   * `WAIT` (an ACL, a serverless tier), with `RedisUnavailableError` when it cannot be reached.
   */
  waitForReplicas?(key: string, replicas: number, timeout: number): Promise<number>;

  /** Releases what the adapter opened itself (its subscriber connection); never the user's client. */
  close(): Promise<void>;
}

/**
 * A connection of the adapter's own for key tracking, connected. It speaks RESP2 whatever the
 * user's client speaks (so that invalidations arrive as messages on `__redis__:invalidate`, not as
 * RESP3 pushes a client may drop), fails its calls at once while it is disconnected (no offline
 * queue, nothing re-sent), and never keeps the process alive.
 */
export interface TrackingLink {
  /** Sends any command (CLIENT TRACKING, CLIENT CACHING, EXISTS), with Redis' own error as the rejection. */
  command(args: readonly string[]): Promise<unknown>;
  /** Runs a script on this connection, as {@link RedisConnection.evalScript} does. */
  evalScript(script: LuaScript, keys: readonly string[], args: readonly ScriptArg[]): Promise<ScriptReply>;
  /**
   * Subscribes to `__redis__:invalidate` (again, after a reconnect), and resolves with this
   * connection's id (`CLIENT ID`, asked while it is not subscribed: a subscribed RESP2 connection
   * cannot), which tracking redirects to. `onKeys` hears the keys Redis says changed, or null when
   * all of them may have (FLUSHALL).
   */
  subscribeInvalidations(onKeys: (keys: readonly string[] | null) => void): Promise<string>;
  /**
   * `down` when the connection is lost, `up` each time it is connected again, `end` when it is
   * closed for good without being asked to (it will not come back).
   */
  onState(listener: { up(): void; down(): void; end(): void }): void;
  /** Closes the connection at once (client shutdown). */
  close(): void;
}
