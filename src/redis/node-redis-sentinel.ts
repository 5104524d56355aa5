/**
 * How a node-redis Sentinel client does what the adapter needs: commands and subscriptions on the
 * master it follows.
 */
import type { NodeRedisShape } from './node-redis-shape.js';

type MessageListener = (message: string) => void;

/** The part of a node-redis `createSentinel()` client latchkey uses (typed here so `redis` is never imported). */
export interface NodeRedisSentinelLike {
  sendCommand(isReadonly: boolean | undefined, args: string[]): Promise<unknown>;
  sSubscribe(channel: string, listener: MessageListener): Promise<unknown>;
  sUnsubscribe(channel: string, listener?: MessageListener): Promise<unknown>;
  on(event: 'topology-change', listener: () => void): unknown;
  off(event: 'topology-change', listener: () => void): unknown;
  getMasterNode(): unknown;
  readonly isOpen: boolean;
}

/**
 * A node-redis Sentinel: commands go to the master it follows (it listens to the Sentinels and
 * moves at once after a failover). It has no duplicate(): latchkey subscribes through the
 * client's own pub/sub connection, which follows the master too, and takes only its own
 * listeners off again. Loss detection here is by renewal (no connection of latchkey's own).
 */
export function nodeRedisSentinelShape(sentinel: NodeRedisSentinelLike): NodeRedisShape {
  return {
    send: (_key, args) => sentinel.sendCommand(false, args),
    subscriber(reconnected) {
      const listeners = new Map<string, MessageListener>();
      // A new master: the pub/sub connection moved to it, and messages sent meanwhile were lost.
      sentinel.on('topology-change', reconnected);
      return {
        ready: Promise.resolve(),
        async sSubscribe(channel, listener) {
          listeners.set(channel, listener);
          await sentinel.sSubscribe(channel, listener);
        },
        async sUnsubscribe(channel) {
          const listener = listeners.get(channel);
          listeners.delete(channel);
          if (listener) await sentinel.sUnsubscribe(channel, listener);
        },
        async close() {
          sentinel.off('topology-change', reconnected);
          const subscribed = [...listeners];
          listeners.clear();
          await Promise.all(
            subscribed.map(([channel, listener]) => sentinel.sUnsubscribe(channel, listener).catch(() => undefined)),
          );
        },
      };
    },
    batchGroup: () => '',
  };
}
