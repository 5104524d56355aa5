/**
 * How a node-redis Cluster does what the adapter needs: routing by slot, reading the slot map again
 * when a primary is down, and channels that follow a failover.
 */
import { now } from '../clock.js';
import { clusterSlot } from './cluster-slot.js';
import type { NodeRedisShape } from './node-redis-shape.js';

type MessageListener = (message: string) => void;

/** A node's connection inside a node-redis Cluster, as latchkey looks at it. */
interface NodeConnection {
  readonly isReady: boolean;
  on(event: 'ready' | 'reconnecting', listener: () => void): unknown;
  /** The server unsubscribed `channel` (its node lost the slot); node-redis 5 names it `sharded-channel-moved`. */
  on(event: 'sharded-channel-moved' | 'server-sunsubscribe', listener: (channel: string) => void): unknown;
}

/**
 * A slot's primary in a node-redis Cluster's slot map. Its connections are promises while node-redis
 * 4 makes them; node-redis 4 keeps the pub/sub one as `pubSubClient`, 5 and later as `pubSub.client`.
 */
interface SlotPrimary {
  readonly address: string;
  readonly client?: NodeConnection | PromiseLike<unknown>;
  /** Set while its connection is first made (a call then waits for it). */
  readonly connectPromise?: Promise<unknown>;
  readonly pubSub?: { readonly client: NodeConnection };
  readonly pubSubClient?: NodeConnection | PromiseLike<unknown>;
}

/** The slot map of a node-redis Cluster: per slot, its primary (`host:port`) and its connections. */
type SlotMap = readonly ({ readonly master: SlotPrimary } | undefined)[];

/** A connection made (not one node-redis 4 is still making, a promise). */
function made(connection: NodeConnection | PromiseLike<unknown> | undefined): NodeConnection | undefined {
  return connection !== undefined && 'isReady' in connection ? connection : undefined;
}

/** Its command connection, made and down now: node-redis queues a call on it until it reconnects. */
function downCommandConnection(primary: SlotPrimary | undefined): NodeConnection | undefined {
  const connection = made(primary?.client);
  return connection && !connection.isReady && primary?.connectPromise === undefined ? connection : undefined;
}

/** Its pub/sub connection, once made. */
function pubSubConnection(primary: SlotPrimary | undefined): NodeConnection | undefined {
  return primary?.pubSub?.client ?? made(primary?.pubSubClient);
}

/** Its pub/sub connection, not up: node-redis holds an SSUBSCRIBE until it connects. */
function downPubSubConnection(primary: SlotPrimary | undefined): NodeConnection | undefined {
  const connection = pubSubConnection(primary);
  return connection && !connection.isReady ? connection : undefined;
}

/** What re-reads a node-redis Cluster's slot map (public in its type declarations). */
interface Rediscovery {
  readonly _slots?: { rediscover(startWith: never): Promise<void> };
}

/** The part of a node-redis `createCluster()` client latchkey uses (typed here so `redis` is never imported). */
export interface NodeRedisClusterLike extends Rediscovery {
  sendCommand(firstKey: string | undefined, isReadonly: boolean | undefined, args: string[]): Promise<unknown>;
  duplicate(overrides?: object): NodeRedisClusterSubscriber;
  nodeClient(node: never): unknown;
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
 * this reads the map again (one refresh at a time), so that the call goes to the new primary;
 * `afterRefresh` then runs.
 */
function slotMapRefresher(
  cluster: Rediscovery & { readonly slots: SlotMap },
  downConnection: (primary: SlotPrimary | undefined) => NodeConnection | undefined,
  afterRefresh?: () => void,
): (slot: number) => Promise<void> {
  let running: Promise<void> | undefined;
  let last = -Infinity;
  return (slot) => {
    const down = downConnection(cluster.slots[slot]?.master);
    if (down === undefined) return Promise.resolve();
    const time = now();
    if (running === undefined && time - last >= REFRESH_EVERY_MS && cluster._slots) {
      last = time;
      running = cluster._slots
        .rediscover(down as never)
        .then(afterRefresh, () => undefined)
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
  const refresh = slotMapRefresher(cluster, downCommandConnection);
  return {
    cluster: true,
    async send(key, args) {
      if (key !== undefined) {
        const slot = clusterSlot(key);
        await refresh(slot);
        // Still mapped to a node that is down (it died, and its replica has not taken over yet):
        // queued there, the call would wait for commandTimeout, and run late if the node came
        // back. Not sent, it fails at once; a wait tries again, an unlock retries.
        const primary = cluster.slots[slot]?.master;
        if (downCommandConnection(primary))
          throw new Error(`Not sent: the primary of slot ${slot} (${primary?.address}) is down`);
      }
      return cluster.sendCommand(key, false, args);
    },
    subscriber(reconnected) {
      const subscriber = cluster.duplicate({ minimizeConnections: true });
      /**
       * Each channel: its listener, the primary it was subscribed on, and what answers the call
       * that subscribed it once `follow` subscribed it on another.
       */
      const channels = new Map<string, SubscribedChannel>();
      /**
       * After the slot map was read again: a channel whose slot a new primary serves (its node
       * died and the replica took over; node-redis drops its channels with it) is subscribed
       * there, and messages meanwhile were lost.
       */
      const follow = (): void => {
        const moves: Promise<void>[] = [];
        for (const [channel, entry] of channels) {
          const address = subscriber.slots[clusterSlot(channel)]?.master.address;
          if (address === undefined || address === entry.address) continue;
          entry.address = address;
          moves.push(subscriber.sSubscribe(channel, entry.listener).then(entry.answer, () => undefined));
        }
        // Not awaited: a new primary that cannot be reached either must not hold up later repairs.
        if (moves.length > 0) void Promise.all(moves).then(reconnected);
      };
      const refreshSubscriber = slotMapRefresher(subscriber, downPubSubConnection, follow);
      // Errors surface through the calls that fail; the listener keeps them from crashing the process.
      subscriber.on('error', () => undefined);
      const reattach = reattacher(subscriber, channels, reconnected);
      /**
       * A shard's connection went down. Back on the same node, node-redis subscribes it again (and
       * says `ready`). Until then each attempt to reconnect reads the slot map again.
       */
      const repair = async (slot: number): Promise<void> => {
        // latchkey's own pause: it must not keep the process alive (shutdown may come meanwhile).
        await new Promise((resolve) => setTimeout(resolve, REFRESH_EVERY_MS).unref());
        await refreshSubscriber(slot);
      };
      const repairing = new Set<number>();
      const watched = new WeakSet<NodeConnection>();
      /** Each shard's connection, once known: a later `ready` is a reconnect, a server unsubscribe a move. */
      const watch = (slot: number): void => {
        const connection = pubSubConnection(subscriber.slots[slot]?.master);
        if (!connection || watched.has(connection)) return;
        watched.add(connection);
        connection.on('ready', reconnected);
        // Its node lost the slot (a failover demoted it): node-redis 5.12 drops the channel there
        // and subscribes it nowhere else.
        connection.on('sharded-channel-moved', (channel) => reattach(channel, connection));
        connection.on('server-sunsubscribe', (channel) => reattach(channel, connection));
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
          const address = subscriber.slots[slot]?.master.address;
          const moved = new Promise<void>((answer) => channels.set(channel, { listener, address, answer }));
          // A connection to a node that died holds the SSUBSCRIBE, and node-redis never answers it
          // (not even once the node left the slot map). Watched before it is answered, the slot is
          // repaired when the replica took over: the channel subscribed there is this call's answer.
          const subscribing = subscriber.sSubscribe(channel, listener);
          watch(slot);
          await Promise.race([subscribing, moved]);
        },
        sUnsubscribe(channel) {
          channels.delete(channel);
          return subscriber.sUnsubscribe(channel);
        },
        close: async () => {
          reattach.stop();
          await subscriber.disconnect().catch(() => undefined);
        },
      };
    },
    batchGroup(key) {
      const slot = clusterSlot(key);
      return cluster.slots[slot]?.master.address ?? `slot ${slot}`;
    },
  };
}

/** A channel of the subscriber: its listener, the primary it was subscribed on, and what answers its first subscription. */
interface SubscribedChannel {
  readonly listener: MessageListener;
  address: string | undefined;
  readonly answer: () => void;
}

/** Pauses between tries to subscribe a channel the server dropped again: the new primary may take a moment to be known. */
const REATTACH_PAUSES_MS = [0, 250, 500, 1_000, 2_000, 4_000];

/**
 * Subscribes again, on the primary that serves it now, a channel whose node unsubscribed it (it
 * lost the slot), after reading the slot map again; then tells the waiters to look again, since
 * messages meanwhile were lost. Tried after growing pauses until every such channel is back.
 */
function reattacher(
  subscriber: NodeRedisClusterSubscriber,
  channels: ReadonlyMap<string, SubscribedChannel>,
  reconnected: () => void,
): { (channel: string, from: NodeConnection): void; stop(): void } {
  const dropped = new Set<string>();
  let timer: NodeJS.Timeout | undefined;
  let step = 0;
  let stopped = false;
  let startWith: NodeConnection | undefined;
  const run = async (): Promise<void> => {
    timer = undefined;
    await subscriber._slots?.rediscover((startWith ?? {}) as never).catch(() => undefined);
    const back = await Promise.all(
      [...dropped].map(async (channel) => {
        const entry = channels.get(channel);
        if (!entry) return dropped.delete(channel);
        try {
          await subscriber.sSubscribe(channel, entry.listener);
        } catch {
          return false;
        }
        entry.address = subscriber.slots[clusterSlot(channel)]?.master.address;
        return dropped.delete(channel);
      }),
    );
    if (back.some(Boolean)) reconnected();
    if (dropped.size > 0 && !stopped && ++step < REATTACH_PAUSES_MS.length) schedule();
  };
  const schedule = (): void => {
    timer = setTimeout(() => void run(), REATTACH_PAUSES_MS[step]);
    timer.unref();
  };
  const reattach = (channel: string, from: NodeConnection): void => {
    if (stopped || !channels.has(channel)) return;
    dropped.add(channel);
    startWith = from;
    if (timer !== undefined) return;
    step = 0;
    schedule();
  };
  reattach.stop = (): void => {
    stopped = true;
    if (timer) clearTimeout(timer);
  };
  return reattach;
}
