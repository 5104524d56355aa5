import type {
  ChannelListener,
  LuaScript,
  RedisConnection,
  ScriptArg,
  ScriptReply,
  TrackingLink,
} from './connection.js';
import {
  nodeRedisTrackingLink,
  trackingLinkOptions,
  type NodeRedisTrackingConnection,
} from './node-redis-tracking-link.js';
import { commandTail, evalWithFallback, subscribeClassified, type ScriptSender } from './script-sender.js';
import { Subscriptions } from './subscriptions.js';

/** The part of a node-redis (v4+) client latchkey uses (typed here so `redis` is never imported). */
export interface NodeRedisLike {
  sendCommand(args: string[]): Promise<unknown>;
  duplicate(): NodeRedisSubscriber;
  readonly isOpen: boolean;
}

/** The subscriber connection node-redis `duplicate()` returns, as latchkey uses it. */
export interface NodeRedisSubscriber {
  connect(): Promise<unknown>;
  subscribe(channel: string, listener: (message: string, channel: string) => void): Promise<unknown>;
  unsubscribe(channel: string): Promise<unknown>;
  on(event: 'error', listener: (error: Error) => void): unknown;
  on(event: 'ready', listener: () => void): unknown;
  disconnect(): Promise<unknown>;
}

export function isNodeRedis(value: unknown): value is NodeRedisLike {
  const candidate = value as Partial<NodeRedisLike> | null;
  return (
    typeof candidate === 'object' &&
    candidate !== null &&
    typeof candidate.sendCommand === 'function' &&
    typeof candidate.duplicate === 'function' &&
    typeof candidate.isOpen === 'boolean'
  );
}

/**
 * Adapts a connected node-redis v4+ client (standalone or Sentinel). Scripts go through
 * `sendCommand`, which both major versions share; subscriptions use a duplicate connection.
 */
export class NodeRedisConnection implements RedisConnection {
  /** The subscriber connection, once made; `#ready` resolves when it is connected. */
  #subscriber: NodeRedisSubscriber | undefined;
  #ready: Promise<NodeRedisSubscriber> | undefined;
  readonly #subscriptions: Subscriptions;
  readonly #sender: ScriptSender = {
    evalsha: (script, keys, args) => this.client.sendCommand(['EVALSHA', script.sha, ...commandTail(keys, args)]),
    eval: (script, keys, args) => this.client.sendCommand(['EVAL', script.source, ...commandTail(keys, args)]),
  };

  constructor(private readonly client: NodeRedisLike) {
    this.#subscriptions = new Subscriptions(
      async (channel) => {
        const subscriber = await this.#subscriberConnection();
        await subscriber.subscribe(channel, (message) => this.#subscriptions.dispatch(channel, message));
      },
      async (channel) => {
        await this.#subscriber?.unsubscribe(channel);
      },
    );
  }

  evalScript(script: LuaScript, keys: readonly string[], args: readonly ScriptArg[]): Promise<ScriptReply> {
    return evalWithFallback(this.#sender, script, keys, args);
  }

  subscribe(channel: string, listener: ChannelListener): Promise<() => Promise<void>> {
    return subscribeClassified(this.#subscriptions, channel, listener);
  }

  batchGroup(): string {
    return '';
  }

  openTrackingLink(name: string): Promise<TrackingLink> {
    const client = this.client as unknown as { duplicate(options: object): NodeRedisTrackingConnection };
    return nodeRedisTrackingLink(client.duplicate(trackingLinkOptions(name)));
  }

  async close(): Promise<void> {
    // A connect still under way (a server that is gone) ends with it rather than hold this up.
    const subscriber = this.#subscriber;
    this.#subscriber = undefined;
    this.#ready = undefined;
    await subscriber?.disconnect().catch(() => undefined);
  }

  #subscriberConnection(): Promise<NodeRedisSubscriber> {
    this.#ready ??= (async () => {
      const subscriber = this.client.duplicate();
      this.#subscriber = subscriber;
      // Errors surface through the calls that fail; the listener keeps them from crashing the process.
      subscriber.on('error', () => undefined);
      // node-redis subscribes its channels again when it reconnects; the listeners are told to look
      // again, since messages published meanwhile were lost.
      let readyBefore = false;
      subscriber.on('ready', () => {
        if (readyBefore) void this.#subscriptions.reconnected(false);
        readyBefore = true;
      });
      try {
        await subscriber.connect();
      } catch (error) {
        if (this.#subscriber === subscriber) {
          this.#subscriber = undefined;
          this.#ready = undefined;
        }
        await subscriber.disconnect().catch(() => undefined);
        throw error;
      }
      return subscriber;
    })();
    return this.#ready;
  }
}
