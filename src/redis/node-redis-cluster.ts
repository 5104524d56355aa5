import { clusterSlot } from './cluster-slot.js';
import type { NodeRedisShape } from './node-redis-shape.js';

type MessageListener = (message: string) => void;

/** A node's connection inside a node-redis Cluster, as latchkey looks at it. */
interface NodeConnection {
  readonly isReady: boolean;
  on(event: 'ready' | 'server-sunsubscribe' | 'reconnecting', listener: () => void): unknown;
}

/** The slot map of a node-redis Cluster: per slot, its primary (`host:port`) and its connections. */
type SlotMap = readonly (
  | {
      readonly master: {
        readonly address: string;
        readonly client?: NodeConnection;
        readonly pubSub?: { readonly client: NodeConnection };
      };
    }
  | undefined
)[];

/** What re-reads a node-redis Cluster's slot map (public in its type declarations). */
interface Rediscovery {
  readonly _slots?: { rediscover(startWith: object): Promise<void> };
}

/** The part of a node-redis `createCluster()` client latchkey uses (typed here so `redis` is never imported). */
export interface NodeRedisClusterLike extends Rediscovery {
  sendCommand(firstKey: string | undefined, isReadonly: boolean | undefined, args: string[]): Promise<unknown>;
  duplicate(overrides?: object): NodeRedisClusterSubscriber;
  nodeClient(node: never): Promise<unknown>;
  readonly slots: SlotMap;
  readonly isOpen: boolean;
}

/** The duplicate Cluster latchkey subscribes with. */
export interface NodeRedisClusterSubscriber extends Rediscovery {
  connect(): Promise<unknown>;
  sSubscribe(channel: string, listener: MessageListener): Promise<unknown>;
  sUnsubscribe(channel: string): Promise<unknown>;
  on(event: string, listener: (...args: unknown[]) => void): unknown;
  readonly slots: SlotMap;
  disconnect(): Promise<unknown>;
}

/** Slot-map refreshes of one Cluster client are this far apart at least. */
const REFRESH_EVERY_MS = 500;

/**
 * node-redis reads a Cluster's slot map again only when a node redirects a command (MOVED, ASK):
 * after a primary died and its replica took over, commands for its slots would wait on the dead
 * node forever (redis/node-redis#2806). Before using a slot whose primary's connection is down,
 * this reads the map again (one refresh at a time), so that the call goes to the new primary.
 */
function slotMapRefresher(cluster: Rediscovery & { readonly slots: SlotMap }): (slot: number) => Promise<void> {
  let running: Promise<void> | undefined;
  let last = -Infinity;
  return (slot) => {
    const connection = cluster.slots[slot]?.master.client;
    if (connection === undefined || connection.isReady) return Promise.resolve();
    if (running === undefined && Date.now() - last >= REFRESH_EVERY_MS && cluster._slots) {
      last = Date.now();
      running = cluster._slots
        .rediscover(connection)
        .catch(() => undefined)
        .finally(() => (running = undefined));
    }
    return running ?? Promise.resolve();
  };
}

/**
 * A node-redis Cluster: each command is routed by its first key; a renewal batch goes to the
 * primary of its first key's slot. Waits use a duplicate Cluster of latchkey's own, whose sharded
 * pub/sub keeps one connection per primary and moves channels when their slot moves.
 */
export function nodeRedisClusterShape(cluster: NodeRedisClusterLike): NodeRedisShape {
  const refresh = slotMapRefresher(cluster);
  return {
    async send(key, args) {
      if (key !== undefined) await refresh(clusterSlot(key));
      return cluster.sendCommand(key, false, args);
    },
    subscriber(reconnected) {
      const subscriber = cluster.duplicate({ minimizeConnections: true });
      const refreshSubscriber = slotMapRefresher(subscriber);
      const channels = new Map<string, MessageListener>();
      // Errors surface through the calls that fail; the listener keeps them from crashing the process.
      subscriber.on('error', () => undefined);
      // A channel whose slot moved is subscribed again on its new primary by node-redis;
      // messages sent meanwhile were lost.
      subscriber.on('sharded-shannel-moved-error', reconnected);
      /**
       * A shard's connection went down. Back on the same node, node-redis subscribes it again; a
       * node that died is replaced in the slot map, and its channels (which node-redis drops with
       * it) are subscribed on the new primary here. Either way messages meanwhile were lost.
       */
      const repair = async (slot: number): Promise<void> => {
        // latchkey's own pause: it must not keep the process alive (shutdown may come meanwhile).
        await new Promise((resolve) => setTimeout(resolve, REFRESH_EVERY_MS).unref());
        const connection = subscriber.slots[slot]?.master.pubSub?.client;
        if (connection?.isReady === false) {
          await refreshSubscriber(slot);
          await Promise.all(
            [...channels].map(([channel, listener]) => subscriber.sSubscribe(channel, listener).catch(() => undefined)),
          );
        }
        reconnected();
      };
      const repairing = new Set<number>();
      const watched = new WeakSet<NodeConnection>();
      /** Each shard's connection, once known: a later `ready` is a reconnect, a server unsubscribe a move. */
      const watch = (slot: number): void => {
        const connection = subscriber.slots[slot]?.master.pubSub?.client;
        if (!connection || watched.has(connection)) return;
        watched.add(connection);
        connection.on('ready', reconnected);
        connection.on('server-sunsubscribe', reconnected);
        connection.on('reconnecting', () => {
          if (repairing.has(slot)) return;
          repairing.add(slot);
          void repair(slot).finally(() => repairing.delete(slot));
        });
      };
      return {
        ready: subscriber.connect(),
        async sSubscribe(channel, listener) {
          const slot = clusterSlot(channel);
          await refreshSubscriber(slot);
          channels.set(channel, listener);
          await subscriber.sSubscribe(channel, listener);
          watch(slot);
        },
        sUnsubscribe(channel) {
          channels.delete(channel);
          return subscriber.sUnsubscribe(channel);
        },
        close: async () => void (await subscriber.disconnect().catch(() => undefined)),
      };
    },
    batchGroup(key) {
      const slot = clusterSlot(key);
      return cluster.slots[slot]?.master.address ?? `slot ${slot}`;
    },
  };
}
