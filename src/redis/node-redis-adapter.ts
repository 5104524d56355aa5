/**
 * The RedisConnection adapter for node-redis v4+ (client, Cluster, Sentinel): scripts, sharded
 * subscriptions, WAIT, tracking links; one shape per kind of client.
 */
import type {
  ChannelListener,
  LuaScript,
  RedisConnection,
  ScriptArg,
  ScriptReply,
  TrackingLink,
} from './connection.js';
import { nodeRedisClusterShape, type NodeRedisClusterLike } from './node-redis-cluster.js';
import { nodeRedisSentinelShape, type NodeRedisSentinelLike } from './node-redis-sentinel.js';
import type { NodeRedisShape, ShardedSubscriber } from './node-redis-shape.js';
import {
  nodeRedisTrackingLink,
  TRACKING_LINK_OPTIONS,
  type NodeRedisTrackingConnection,
} from './node-redis-tracking-link.js';
import {
  classifyRefusal,
  commandTail,
  evalWithFallback,
  subscribeClassified,
  WAIT_REFUSED,
  type ScriptSender,
} from './script-sender.js';
import { Subscriptions } from './subscriptions.js';

/** The part of a node-redis (v4+) standalone client latchkey uses (typed here so `redis` is never imported). */
export interface NodeRedisLike {
  sendCommand(args: string[]): Promise<unknown>;
  duplicate(): NodeRedisSubscriber;
  readonly isOpen: boolean;
}

/** The subscriber connection node-redis `duplicate()` returns, as latchkey uses it. */
export interface NodeRedisSubscriber {
  connect(): Promise<unknown>;
  sSubscribe(channel: string, listener: (message: string, channel: string) => void): Promise<unknown>;
  sUnsubscribe(channel: string): Promise<unknown>;
  on(event: 'error', listener: (error: Error) => void): unknown;
  on(event: 'ready', listener: () => void): unknown;
  disconnect(): Promise<unknown>;
}

/** Any node-redis client latchkey adapts: a client, a Cluster or a Sentinel. */
export type AnyNodeRedis = NodeRedisLike | NodeRedisClusterLike | NodeRedisSentinelLike;

export function isNodeRedis(value: unknown): value is AnyNodeRedis {
  const candidate = value as Partial<NodeRedisLike> | null;
  return (
    typeof candidate === 'object' &&
    candidate !== null &&
    typeof candidate.sendCommand === 'function' &&
    typeof candidate.isOpen === 'boolean'
  );
}

function shapeOf(client: AnyNodeRedis): NodeRedisShape {
  if ('nodeClient' in client && typeof client.nodeClient === 'function') return nodeRedisClusterShape(client);
  if ('getMasterNode' in client && typeof client.getMasterNode === 'function') return nodeRedisSentinelShape(client);
  const standalone = client as NodeRedisLike;
  if (typeof standalone.duplicate !== 'function') {
    throw new TypeError('Expected `redis` to be a node-redis client, Cluster or Sentinel');
  }
  return {
    send: (_key, args) => standalone.sendCommand(args),
    subscriber(reconnected) {
      const subscriber = standalone.duplicate();
      // Errors surface through the calls that fail; the listener keeps them from crashing the process.
      subscriber.on('error', () => undefined);
      // node-redis subscribes its channels again when it reconnects.
      let readyBefore = false;
      subscriber.on('ready', () => {
        if (readyBefore) reconnected();
        readyBefore = true;
      });
      return {
        ready: subscriber.connect(),
        sSubscribe: (channel, listener) => subscriber.sSubscribe(channel, listener),
        sUnsubscribe: (channel) => subscriber.sUnsubscribe(channel),
        close: async () => void (await subscriber.disconnect().catch(() => undefined)),
      };
    },
    batchGroup: () => '',
    trackingLink(name, signal) {
      const duplicate = standalone as unknown as { duplicate(options: object): NodeRedisTrackingConnection };
      return nodeRedisTrackingLink(duplicate.duplicate(TRACKING_LINK_OPTIONS), name, signal);
    },
  };
}

/**
 * Adapts a connected node-redis v4+ client, Cluster (`createCluster`) or Sentinel
 * (`createSentinel`). Scripts go through `sendCommand`, routed by their first key; waits listen
 * with sharded pub/sub on a subscriber of latchkey's own (Sentinel: the client's own pub/sub
 * connection, which follows the master).
 */
export class NodeRedisConnection implements RedisConnection {
  readonly #shape: NodeRedisShape;
  /** The subscriber, once asked for; dropped when it could not connect, so the next call tries again. */
  #subscriber: ShardedSubscriber | undefined;
  readonly #subscriptions: Subscriptions;
  readonly #sender: ScriptSender = {
    evalsha: (script, keys, args) => this.#shape.send(keys[0], ['EVALSHA', script.sha, ...commandTail(keys, args)]),
    eval: (script, keys, args) => this.#shape.send(keys[0], ['EVAL', script.source, ...commandTail(keys, args)]),
  };

  constructor(client: AnyNodeRedis) {
    this.#shape = shapeOf(client);
    this.#subscriptions = new Subscriptions(
      async (channel) => {
        const subscriber = await this.#subscriberConnection();
        await subscriber.sSubscribe(channel, (message) => this.#subscriptions.dispatch(channel, message));
      },
      async (channel) => {
        await this.#subscriber?.sUnsubscribe(channel);
      },
    );
  }

  evalScript(script: LuaScript, keys: readonly string[], args: readonly ScriptArg[]): Promise<ScriptReply> {
    return evalWithFallback(this.#sender, script, keys, args);
  }

  subscribe(channel: string, listener: ChannelListener): Promise<() => Promise<void>> {
    return subscribeClassified(this.#subscriptions, channel, listener);
  }

  get cluster(): boolean {
    return this.#shape.cluster === true;
  }

  batchGroup(key: string): string {
    return this.#shape.batchGroup(key);
  }

  openTrackingLink(name: string, signal: AbortSignal): Promise<TrackingLink> | undefined {
    return this.#shape.trackingLink?.(name, signal);
  }

  async waitForReplicas(key: string, replicas: number, timeout: number): Promise<number> {
    try {
      return Number(await this.#shape.send(key, ['WAIT', String(replicas), String(timeout)]));
    } catch (error) {
      throw classifyRefusal(error, 'WAIT', WAIT_REFUSED);
    }
  }

  async close(): Promise<void> {
    // A connect still under way (a server that is gone) ends with it rather than hold this up.
    const subscriber = this.#subscriber;
    this.#subscriber = undefined;
    await subscriber?.close();
  }

  async #subscriberConnection(): Promise<ShardedSubscriber> {
    const subscriber = (this.#subscriber ??= this.#shape.subscriber(() => void this.#subscriptions.reconnected(false)));
    try {
      await subscriber.ready;
    } catch (error) {
      if (this.#subscriber === subscriber) this.#subscriber = undefined;
      await subscriber.close();
      throw error;
    }
    return subscriber;
  }
}
