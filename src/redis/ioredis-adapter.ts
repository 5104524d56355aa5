/**
 * The RedisConnection adapter for ioredis (Redis, Sentinel, Cluster): scripts, sharded
 * subscriptions, WAIT, tracking links, and the clients it refuses.
 */
import type {
  ChannelListener,
  LuaScript,
  RedisConnection,
  ScriptArg,
  ScriptReply,
  TrackingLink,
} from './connection.js';
import { clusterSlot } from './cluster-slot.js';
import { WriteCoalescer, type CorkableStream } from './coalesce-writes.js';
import { RedisUnavailableError } from '../errors.js';
import {
  classifyRefusal,
  evalWithFallback,
  subscribeClassified,
  WAIT_REFUSED,
  type ScriptSender,
} from './script-sender.js';
import { ioredisTrackingLink, TRACKING_LINK_OPTIONS, type IoredisTrackingConnection } from './ioredis-tracking-link.js';
import { followSubscriberMoves } from './ioredis-cluster-moves.js';
import { Subscriptions } from './subscriptions.js';

/** The part of an ioredis `Redis` or `Cluster` latchkey uses (typed here so ioredis is never imported). */
export interface IoredisLike {
  evalsha(sha: string, numKeys: number, ...keysAndArgs: ScriptArg[]): Promise<unknown>;
  eval(source: string, numKeys: number, ...keysAndArgs: ScriptArg[]): Promise<unknown>;
  duplicate(...overrides: never[]): IoredisSubscriber;
  /** Any command (WAIT), on a standalone client. */
  call?(command: string, ...args: ScriptArg[]): Promise<unknown>;
  /** A Cluster's connection per node (the ones its commands go over). */
  nodes?(role: 'master'): readonly {
    readonly options: { host?: string; port?: number };
    call(command: string, ...args: ScriptArg[]): Promise<unknown>;
  }[];
  readonly isCluster?: boolean;
  /** A Cluster's slot map: per slot, the addresses of its nodes, the primary first. */
  readonly slots?: readonly (readonly string[] | undefined)[];
  /** A standalone client's socket (ioredis' public `stream`), corked to coalesce one tick's scripts. */
  readonly stream?: CorkableStream;
}

/** The subscriber connection ioredis `duplicate()` returns, as latchkey uses it. */
export interface IoredisSubscriber {
  connect(): Promise<unknown>;
  ssubscribe(channel: string): Promise<unknown>;
  sunsubscribe(channel: string): Promise<unknown>;
  on(event: 'smessage', listener: (channel: string, message: string) => void): unknown;
  on(event: 'ready' | 'subscribersReady' | 'end' | 'nodeError', listener: () => void): unknown;
  on(event: 'error', listener: (error: Error) => void): unknown;
  off(event: 'ready' | 'subscribersReady', listener: () => void): unknown;
  disconnect(): void;
  /** A Cluster's: reads the slot map again. */
  refreshSlotsCache?(callback?: (error?: Error | null) => void): void;
}

export function isIoredis(value: unknown): value is IoredisLike {
  const candidate = value as Partial<IoredisLike> | null;
  return (
    typeof candidate === 'object' &&
    candidate !== null &&
    typeof candidate.evalsha === 'function' &&
    typeof candidate.duplicate === 'function'
  );
}

/** Adapts an ioredis `Redis` (standalone or Sentinel) or `Cluster` client. */
export class IoredisConnection implements RedisConnection {
  /** The subscriber connection, once made; `#ready` resolves when it is ready for SUBSCRIBE. */
  #subscriber: IoredisSubscriber | undefined;
  #ready: Promise<IoredisSubscriber> | undefined;
  /** Stops following a Cluster subscriber's moves. */
  #stopFollowing = (): void => undefined;
  readonly #subscriptions: Subscriptions;
  readonly #writes = new WriteCoalescer();
  readonly #sender: ScriptSender = {
    evalsha: (script, keys, args) => this.client.evalsha(script.sha, keys.length, ...keys, ...args),
    eval: (script, keys, args) => this.client.eval(script.source, keys.length, ...keys, ...args),
  };

  constructor(private readonly client: IoredisLike) {
    refuseSplitBrain(client);
    refuseKeyPrefix(client);
    this.#subscriptions = new Subscriptions(
      async (channel) => {
        const subscriber = await this.#subscriberConnection();
        const subscribing = subscriber.ssubscribe(channel);
        // On a Cluster, ioredis 5.11 never answers an SSUBSCRIBE that a node refused with MOVED (the
        // slot moved since the subscriber read its slot map): it reads the map again, subscribes
        // every channel anew on the right node, and says `subscribersReady`.
        await (this.client.isCluster === true
          ? settledOrSaid(subscriber, 'subscribersReady', subscribing)
          : subscribing);
      },
      async (channel) => {
        await this.#subscriber?.sunsubscribe(channel);
      },
    );
  }

  evalScript(script: LuaScript, keys: readonly string[], args: readonly ScriptArg[]): Promise<ScriptReply> {
    // A Cluster routes each command to a node's socket of its own: nothing to cork here.
    const stream = this.client.isCluster === true ? undefined : this.client.stream;
    this.#writes.beforeWrite(stream);
    const reply = evalWithFallback(this.#sender, script, keys, args);
    this.#writes.afterWrite();
    return reply;
  }

  subscribe(channel: string, listener: ChannelListener): Promise<() => Promise<void>> {
    return subscribeClassified(this.#subscriptions, channel, listener);
  }

  get cluster(): boolean {
    return this.client.isCluster === true;
  }

  batchGroup(key: string): string {
    if (this.client.isCluster !== true) return '';
    // The slot's primary; a slot the client has not mapped yet is a group of its own.
    const slot = clusterSlot(key);
    return this.client.slots?.[slot]?.[0] ?? `slot ${slot}`;
  }

  async waitForReplicas(key: string, replicas: number, timeout: number): Promise<number> {
    try {
      return Number(await this.#nodeOf(key).call('WAIT', replicas, timeout));
    } catch (error) {
      throw classifyRefusal(error, 'WAIT', WAIT_REFUSED);
    }
  }

  /** The connection commands on `key` go over: a Cluster's connection to the slot's primary. */
  #nodeOf(key: string): { call(command: string, ...args: ScriptArg[]): Promise<unknown> } {
    if (this.client.isCluster !== true) return this.client as Required<IoredisLike>;
    const address = this.client.slots?.[clusterSlot(key)]?.[0];
    const node = this.client.nodes?.('master').find(({ options }) => `${options.host}:${options.port}` === address);
    if (!node) throw new RedisUnavailableError(`No Cluster primary is known for the slot of ${key}`);
    return node;
  }

  openTrackingLink(name: string, signal: AbortSignal): Promise<TrackingLink> | undefined {
    // A Cluster's keys live on several nodes: loss is found by renewal there.
    if (this.client.isCluster === true) return undefined;
    const client = this.client as unknown as { duplicate(options: object): IoredisTrackingConnection };
    return ioredisTrackingLink(client.duplicate({ ...TRACKING_LINK_OPTIONS, connectionName: name }), signal);
  }

  close(): Promise<void> {
    // disconnect(), not quit(): quit() leaves a Sentinel failover detector's connections open,
    // and waits on a server that may be gone. A connect still under way ends with it.
    const subscriber = this.#subscriber;
    this.#subscriber = undefined;
    this.#ready = undefined;
    this.#stopFollowing();
    subscriber?.disconnect();
    return Promise.resolve();
  }

  /**
   * Waits use sharded pub/sub (SSUBSCRIBE; the scripts SPUBLISH): on a Cluster each message stays
   * on the shard of its lock, where classic pub/sub would send every one to every node.
   *
   * A standalone duplicate waits for `ready` before its first SSUBSCRIBE: subscribing while it
   * still connects makes its ready check (INFO) fail in subscriber mode, and the reconnect that
   * follows drops the subscriptions. It does not resubscribe by itself (autoResubscribe off): on
   * every later `ready` the channels are subscribed again here and their listeners told to look
   * again. A Cluster duplicate keeps one subscriber per primary (ioredis' shardedSubscribers),
   * moves and resubscribes them itself when the slot map changes, then says `subscribersReady`.
   */
  #subscriberConnection(): Promise<IoredisSubscriber> {
    this.#ready ??= (async () => {
      const cluster = this.client.isCluster === true;
      // A Cluster's duplicate() takes startup nodes first, a standalone client's its options.
      const client = this.client as unknown as { duplicate(...args: unknown[]): IoredisSubscriber };
      const subscriber = cluster
        ? client.duplicate([], { lazyConnect: true, shardedSubscribers: true })
        : client.duplicate({ lazyConnect: true, autoResubscribe: false });
      this.#subscriber = subscriber;
      subscriber.on('smessage', (channel, message) => this.#subscriptions.dispatch(channel, message));
      // Errors surface through the calls that fail; the listener keeps them from crashing the process.
      subscriber.on('error', () => undefined);
      let readyBefore = false;
      subscriber.on(cluster ? 'subscribersReady' : 'ready', () => {
        if (readyBefore) void this.#subscriptions.reconnected(!cluster);
        readyBefore = true;
      });
      if (cluster) this.#stopFollowing = followSubscriberMoves(subscriber);
      // Ended for good while in use (a client that does not reconnect, or ioredis giving up after
      // a Sentinel failover): a new duplicate takes over every channel.
      subscriber.on('end', () => {
        if (this.#subscriber !== subscriber || !readyBefore) return;
        this.#subscriber = undefined;
        this.#ready = undefined;
        this.#stopFollowing();
        void this.#subscriptions.reconnected(true);
      });
      try {
        // A Cluster whose ready check failed (a node died, and is still in the slot map) connects
        // again by itself and says `ready`, but ioredis 5.11 never settles the first connect().
        await settledOrSaid(subscriber, 'ready', subscriber.connect());
      } catch (error) {
        subscriber.disconnect();
        if (this.#subscriber === subscriber) {
          this.#subscriber = undefined;
          this.#ready = undefined;
        }
        throw error;
      }
      return subscriber;
    })();
    return this.#ready;
  }
}

/** Settles like `call`, or resolves when `subscriber` says `event` first. */
function settledOrSaid(
  subscriber: IoredisSubscriber,
  event: 'ready' | 'subscribersReady',
  call: Promise<unknown>,
): Promise<unknown> {
  let listener = (): void => undefined;
  const said = new Promise<void>((resolve) => {
    listener = () => resolve();
    subscriber.on(event, listener);
  });
  return Promise.race([call, said]).finally(() => subscriber.off(event, listener));
}

/**
 * An ioredis client that reaches its master through Sentinel notices a failover only when the old
 * master drops it, which a planned failover does not do for seconds: meanwhile it keeps writing to
 * the old master while new clients use the new one, and both grant the same lock. ioredis'
 * `failoverDetector` listens to the Sentinels and moves at once; without it, latchkey refuses.
 */
function refuseSplitBrain(client: IoredisLike): void {
  const { options } = client as { options?: { sentinels?: readonly unknown[] | null; failoverDetector?: boolean } };
  const { sentinels, failoverDetector } = options ?? {};
  if (sentinels && sentinels.length > 0 && failoverDetector !== true) {
    throw new TypeError(
      'Expected `redis`, an ioredis client through Sentinel, to be created with `failoverDetector: true`: ' +
        'without it, after a failover it goes on granting locks on the old master that the new one grants again. ' +
        'Use new Redis({ sentinels, name, failoverDetector: true }).',
    );
  }
}

/**
 * ioredis' `keyPrefix` prefixes the keys of some commands (a script's keys) and not others
 * (channels, commands sent by `call()` in capitals): a lock's key and the channel its waiters
 * listen on would part ways, and key tracking would watch keys that do not exist. latchkey refuses
 * it rather than half work; its own `keyPrefix` option puts every key and channel under a prefix.
 * (A Cluster's `redisOptions.keyPrefix` is copied into its `options.keyPrefix` by ioredis.)
 */
function refuseKeyPrefix(client: IoredisLike): void {
  const { options } = client as { options?: { keyPrefix?: string | Buffer } };
  const prefix = options?.keyPrefix?.toString();
  if (prefix === undefined || prefix === '') return;
  const fix =
    client.isCluster === true
      ? 'a Cluster created without keyPrefix'
      : "a client without it (redis.duplicate({ keyPrefix: '' }))";
  throw new TypeError(
    `Expected \`redis\` to be an ioredis client without \`keyPrefix\` (it has ${JSON.stringify(prefix)}): ` +
      'ioredis prefixes the keys of scripts but not the channels waiters listen on, nor every command, so waits ' +
      `would be slow and lost locks unnoticed. Give latchkey ${fix} and use LockClient's own keyPrefix option, ` +
      `e.g. new LockClient(client, { keyPrefix: ${JSON.stringify(`${prefix}latchkey:`)} }).`,
  );
}
