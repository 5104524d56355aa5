import type { TrackingLink } from './connection.js';
import { commandTail, evalWithFallback, type ScriptSender } from './script-sender.js';
import { connectUnlessAborted } from './tracking.js';

/** The node-redis connection a tracking link is made of (a `duplicate()` of the user's client). */
export interface NodeRedisTrackingConnection {
  connect(): Promise<unknown>;
  sendCommand(args: string[]): Promise<unknown>;
  subscribe(channel: string, listener: (message: unknown) => void): Promise<unknown>;
  on(event: 'ready' | 'reconnecting' | 'end', listener: () => void): unknown;
  on(event: 'error', listener: (error: Error) => void): unknown;
  unref(): void;
  disconnect(): Promise<unknown>;
}

/** The options that make a duplicate fit for tracking (see TrackingLink). */
export const trackingLinkOptions = (name: string) => ({ name, disableOfflineQueue: true }) as const;

/** A TrackingLink over a node-redis duplicate, once connected; closed instead if `signal` aborts first. */
export async function nodeRedisTrackingLink(
  connection: NodeRedisTrackingConnection,
  signal: AbortSignal,
): Promise<TrackingLink> {
  // Errors surface through the calls that fail; the listener keeps them from crashing the process.
  connection.on('error', () => undefined);
  await connectUnlessAborted(
    () => connection.connect(),
    () => connection.disconnect().catch(() => undefined),
    signal,
  );
  // latchkey's own connection serves the user's work, it is not work.
  connection.unref();
  const sender: ScriptSender = {
    evalsha: (script, keys, args) => connection.sendCommand(['EVALSHA', script.sha, ...commandTail(keys, args)]),
    eval: (script, keys, args) => connection.sendCommand(['EVAL', script.source, ...commandTail(keys, args)]),
  };
  let subscribed = false;
  let closing = false;
  return {
    command: (args) => connection.sendCommand([...args]),
    evalScript: (script, keys, args) => evalWithFallback(sender, script, keys, args),
    async subscribeInvalidations(onKeys) {
      // node-redis subscribes again by itself after a reconnect.
      if (subscribed) return;
      // An array of keys, or null after FLUSHALL.
      await connection.subscribe('__redis__:invalidate', (message) =>
        onKeys(Array.isArray(message) ? message.map(String) : null),
      );
      subscribed = true;
    },
    onState(listener) {
      connection.on('reconnecting', () => listener.down());
      connection.on('end', () => {
        listener.down();
        if (!closing) listener.end();
      });
      connection.on('ready', () => listener.up());
    },
    close: () => {
      // node-redis throws on a second disconnect() (ClientClosedError), and not as a rejection.
      if (closing) return;
      closing = true;
      void connection.disconnect().catch(() => undefined);
    },
  };
}
