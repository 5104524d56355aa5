/**
 * The shape the node-redis adapter asks of each kind of node-redis client (client, Cluster, Sentinel).
 */
import type { TrackingLink } from './connection.js';

/** A sharded subscriber of latchkey's own (or one it shares, for Sentinel). */
export interface ShardedSubscriber {
  /** Resolves once it is connected; rejects when it could not connect. */
  readonly ready: Promise<unknown>;
  sSubscribe(channel: string, listener: (message: string) => void): Promise<unknown>;
  sUnsubscribe(channel: string): Promise<unknown>;
  close(): Promise<void>;
}

/** How one kind of node-redis client (client, Cluster, Sentinel) does what the adapter needs. */
export interface NodeRedisShape {
  /** A Cluster: its slots may move (see RedisConnection.cluster). */
  readonly cluster?: boolean;
  /** Sends a command that touches `key` (undefined: none) on the connection that serves it. */
  send(key: string | undefined, args: string[]): Promise<unknown>;
  /** Starts connecting a subscriber; `reconnected` is called whenever messages may have been lost. */
  subscriber(reconnected: () => void): ShardedSubscriber;
  batchGroup(key: string): string;
  /** Left out where no one connection serves every key (Cluster) or follows the master (Sentinel). */
  trackingLink?(name: string, signal: AbortSignal): Promise<TrackingLink>;
}
