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
import { evalWithFallback, subscribeClassified, type ScriptSender } from './script-sender.js';
import { ioredisTrackingLink, TRACKING_LINK_OPTIONS, type IoredisTrackingConnection } from './ioredis-tracking-link.js';
import { Subscriptions } from './subscriptions.js';

/** The part of an ioredis `Redis` or `Cluster` latchkey uses (typed here so ioredis is never imported). */
export interface IoredisLike {
  evalsha(sha: string, numKeys: number, ...keysAndArgs: ScriptArg[]): Promise<unknown>;
  eval(source: string, numKeys: number, ...keysAndArgs: ScriptArg[]): Promise<unknown>;
  duplicate(...overrides: never[]): IoredisSubscriber;
  readonly isCluster?: boolean;
  /** A standalone client's socket (ioredis' public `stream`), corked to coalesce one tick's scripts. */
  readonly stream?: CorkableStream;
}

/** The subscriber connection ioredis `duplicate()` returns, as latchkey uses it. */
export interface IoredisSubscriber {
  connect(): Promise<unknown>;
  subscribe(channel: string): Promise<unknown>;
  unsubscribe(channel: string): Promise<unknown>;
  on(event: 'message', listener: (channel: string, message: string) => void): unknown;
  on(event: 'ready', listener: () => void): unknown;
  on(event: 'error', listener: (error: Error) => void): unknown;
  disconnect(): void;
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
  readonly #subscriptions: Subscriptions;
  readonly #writes = new WriteCoalescer();
  readonly #sender: ScriptSender = {
    evalsha: (script, keys, args) => this.client.evalsha(script.sha, keys.length, ...keys, ...args),
    eval: (script, keys, args) => this.client.eval(script.source, keys.length, ...keys, ...args),
  };

  constructor(private readonly client: IoredisLike) {
    this.#subscriptions = new Subscriptions(
      async (channel) => {
        await (await this.#subscriberConnection()).subscribe(channel);
      },
      async (channel) => {
        await this.#subscriber?.unsubscribe(channel);
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

  batchGroup(key: string): string {
    return this.client.isCluster === true ? String(clusterSlot(key)) : '';
  }

  openTrackingLink(name: string): Promise<TrackingLink> | undefined {
    // A Cluster's keys live on several nodes: loss is found by renewal there.
    if (this.client.isCluster === true) return undefined;
    const client = this.client as unknown as { duplicate(options: object): IoredisTrackingConnection };
    return ioredisTrackingLink(client.duplicate({ ...TRACKING_LINK_OPTIONS, connectionName: name }));
  }

  close(): Promise<void> {
    // disconnect(), not quit(): quit() leaves a Sentinel failover detector's connections open,
    // and waits on a server that may be gone. A connect still under way ends with it.
    this.#subscriber?.disconnect();
    this.#subscriber = undefined;
    this.#ready = undefined;
    return Promise.resolve();
  }

  /**
   * The duplicate connection waits for `ready` before its first SUBSCRIBE: subscribing while it
   * still connects makes its ready check (INFO) fail in subscriber mode, and the reconnect that
   * follows drops the subscriptions. A standalone duplicate does not resubscribe by itself
   * (autoResubscribe off): on every later `ready` the channels are subscribed again here and
   * their listeners told to look again. A Cluster resubscribes through its own subscriber.
   */
  #subscriberConnection(): Promise<IoredisSubscriber> {
    this.#ready ??= (async () => {
      const cluster = this.client.isCluster === true;
      // A Cluster's duplicate() takes startup nodes first, a standalone client's its options.
      const client = this.client as unknown as { duplicate(...args: unknown[]): IoredisSubscriber };
      const subscriber = cluster
        ? client.duplicate([], { lazyConnect: true })
        : client.duplicate({ lazyConnect: true, autoResubscribe: false });
      this.#subscriber = subscriber;
      subscriber.on('message', (channel, message) => this.#subscriptions.dispatch(channel, message));
      // Errors surface through the calls that fail; the listener keeps them from crashing the process.
      subscriber.on('error', () => undefined);
      let readyBefore = false;
      subscriber.on('ready', () => {
        if (readyBefore) void this.#subscriptions.reconnected(!cluster);
        readyBefore = true;
      });
      try {
        await subscriber.connect();
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
