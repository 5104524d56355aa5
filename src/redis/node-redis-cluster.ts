import { clusterSlot } from './cluster-slot.js';
import type { NodeRedisShape } from './node-redis-shape.js';

type MessageListener = (message: string) => void;

/** The part of a node-redis `createCluster()` client latchkey uses (typed here so `redis` is never imported). */
export interface NodeRedisClusterLike {
  sendCommand(firstKey: string | undefined, isReadonly: boolean | undefined, args: string[]): Promise<unknown>;
  duplicate(overrides?: object): NodeRedisClusterSubscriber;
  nodeClient(node: never): Promise<unknown>;
  /** Per slot, its shard: the primary's `address` (`host:port`). */
  readonly slots: readonly ({ readonly master: { readonly address: string } } | undefined)[];
  readonly isOpen: boolean;
}

/** The duplicate Cluster latchkey subscribes with. */
export interface NodeRedisClusterSubscriber {
  connect(): Promise<unknown>;
  sSubscribe(channel: string, listener: MessageListener): Promise<unknown>;
  sUnsubscribe(channel: string): Promise<unknown>;
  on(event: string, listener: (...args: unknown[]) => void): unknown;
  readonly slots: readonly ({ readonly master: { readonly pubSub?: { readonly client: PubSubClient } } } | undefined)[];
  disconnect(): Promise<unknown>;
}

/** A shard's pub/sub connection inside the duplicate. */
interface PubSubClient {
  on(event: 'ready' | 'server-sunsubscribe', listener: () => void): unknown;
}

/**
 * A node-redis Cluster: each command is routed by its first key; a renewal batch goes to the
 * primary of its first key's slot. Waits use a duplicate Cluster of latchkey's own, whose sharded
 * pub/sub keeps one connection per primary and moves channels when their slot moves.
 */
export function nodeRedisClusterShape(cluster: NodeRedisClusterLike): NodeRedisShape {
  return {
    send: (key, args) => cluster.sendCommand(key, false, args),
    subscriber(reconnected) {
      const subscriber = cluster.duplicate({ minimizeConnections: true });
      // Errors surface through the calls that fail; the listener keeps them from crashing the process.
      subscriber.on('error', () => undefined);
      // A channel whose slot moved is subscribed again on its new primary by node-redis;
      // messages sent meanwhile were lost.
      subscriber.on('sharded-shannel-moved-error', reconnected);
      const watched = new WeakSet<PubSubClient>();
      /** Each shard's connection, once known: a later `ready` is a reconnect, a server unsubscribe a move. */
      const watch = (channel: string): void => {
        const client = subscriber.slots[clusterSlot(channel)]?.master.pubSub?.client;
        if (!client || watched.has(client)) return;
        watched.add(client);
        client.on('ready', reconnected);
        client.on('server-sunsubscribe', reconnected);
      };
      return {
        ready: subscriber.connect(),
        async sSubscribe(channel, listener) {
          await subscriber.sSubscribe(channel, listener);
          watch(channel);
        },
        sUnsubscribe: (channel) => subscriber.sUnsubscribe(channel),
        close: async () => void (await subscriber.disconnect().catch(() => undefined)),
      };
    },
    batchGroup(key) {
      const slot = clusterSlot(key);
      return cluster.slots[slot]?.master.address ?? `slot ${slot}`;
    },
  };
}
