/**
 * The sharded subscriber latchkey opens beside a Valkey GLIDE Cluster client: a GlideClusterClient
 * of its own, made with the user's configuration and a message callback (GLIDE hands messages only
 * to the callback a client was created with). GLIDE subscribes each channel on the primary of its
 * slot, and again after a reconnect or a slot move.
 */
import type { ShardedSubscriber } from './node-redis-shape.js';

/** The part of a GLIDE client configuration latchkey reads (to open its subscriber). */
export interface GlideConfig {
  readonly addresses?: readonly { readonly host: string; readonly port?: number }[];
  readonly useTLS?: boolean;
  readonly credentials?: { readonly username?: string; readonly password?: string };
  readonly advancedConfiguration?: {
    readonly tlsAdvancedConfiguration?: { readonly insecure?: boolean; readonly rootCertificates?: string | Buffer };
  };
}

/** A GLIDE message as its callback receives it. */
interface GlideMessage {
  readonly channel: unknown;
  readonly message: unknown;
}

/** The part of a GlideClusterClient latchkey's subscriber uses. */
export interface GlideClusterLike {
  ssubscribe(channels: Iterable<string>, timeoutMs: number): Promise<void>;
  sunsubscribe(channels: Iterable<string> | null, timeoutMs: number): Promise<void>;
  sunsubscribeLazy(channels: Iterable<string> | null): Promise<void>;
  close(errorMessage?: string): void;
}

type CreateCluster = (config: object) => Promise<GlideClusterLike>;

/** How long a subscription may take to be confirmed; past it the wait fails as unavailable and tries again. */
const CONFIRM_MS = 10_000;

export function glideSubscriber(client: GlideClusterLike, config: GlideConfig): ShardedSubscriber {
  const listeners = new Map<string, (message: string) => void>();
  // The user's own class makes it: latchkey never imports GLIDE for it.
  const createClient = (client.constructor as unknown as { createClient: CreateCluster }).createClient;
  const subscriber = createClient.call(client.constructor, {
    ...config,
    pubsubSubscriptions: {
      channelsAndPatterns: {},
      callback: ({ channel, message }: GlideMessage) => listeners.get(String(channel))?.(String(message)),
    },
  });
  // A failed creation is reported through `ready`; this keeps it from being unhandled meanwhile.
  subscriber.catch(() => undefined);
  return {
    ready: subscriber,
    async sSubscribe(channel, listener) {
      listeners.set(channel, listener);
      const glide = await subscriber;
      try {
        await glide.ssubscribe([channel], CONFIRM_MS);
      } catch (error) {
        listeners.delete(channel);
        // GLIDE keeps wanting the channel (and subscribes it later): it is not wanted any more.
        await glide.sunsubscribeLazy([channel]).catch(() => undefined);
        throw error;
      }
    },
    async sUnsubscribe(channel) {
      listeners.delete(channel);
      await (await subscriber).sunsubscribe([channel], CONFIRM_MS);
    },
    async close() {
      listeners.clear();
      (await subscriber.catch(() => undefined))?.close();
    },
  };
}
