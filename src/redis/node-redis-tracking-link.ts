/** How a node-redis client (v4, v5) gives latchkey a connection for key tracking (see TrackingLink). */
import { connectUnlessAborted } from './connect-unless-aborted.js';
import type { TrackingLink } from './connection.js';
import { commandTail, evalWithFallback, type ScriptSender } from './script-sender.js';

/** The node-redis connection a tracking link is made of (a `duplicate()` of the user's client). */
export interface NodeRedisTrackingConnection {
  connect(): Promise<unknown>;
  sendCommand(args: string[]): Promise<unknown>;
  subscribe(channel: string, listener: (message: unknown) => void): Promise<unknown>;
  unsubscribe(channel: string): Promise<unknown>;
  on(event: 'ready' | 'reconnecting' | 'end', listener: () => void): unknown;
  on(event: 'error', listener: (error: Error) => void): unknown;
  unref(): void;
  disconnect(): Promise<unknown>;
}

const CHANNEL = '__redis__:invalidate';

/**
 * The options that make a duplicate fit for tracking (see TrackingLink). `RESP: 2`: under RESP3
 * Redis sends invalidations as pushes, which node-redis hands to no listener of ours (v5's
 * `emitInvalidate`, client-side cache and maintenance notifications need RESP3, and a duplicate
 * of a RESP3 client inherits them: they are turned off, or it would refuse RESP2). No `name`: node-redis
 * sends it as part of connecting, and a server that refuses `CLIENT SETNAME` then makes it
 * reconnect forever; the link names itself with a command whose refusal is ignored.
 */
export const TRACKING_LINK_OPTIONS = {
  RESP: 2,
  clientSideCache: undefined,
  emitInvalidate: undefined,
  maintNotifications: 'disabled',
  disableOfflineQueue: true,
} as const;

/** A TrackingLink over a node-redis duplicate, once connected; closed instead if `signal` aborts first. */
export async function nodeRedisTrackingLink(
  connection: NodeRedisTrackingConnection,
  name: string,
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
  // Named on each new socket, where it is not subscribed (a subscribed one is named by subscribeInvalidations).
  const nameIt = (): Promise<unknown> => connection.sendCommand(['CLIENT', 'SETNAME', name]).catch(() => undefined);
  void nameIt();
  let subscribed = false;
  /** This connection's id while it is connected (asked again on each new socket). */
  let id: string | undefined;
  connection.on('reconnecting', () => (id = undefined));
  connection.on('end', () => (id = undefined));
  let closing = false;
  return {
    command: (args) => connection.sendCommand([...args]),
    evalScript: (script, keys, args) => evalWithFallback(sender, script, keys, args),
    async subscribeInvalidations(onKeys) {
      if (id === undefined) {
        // A new socket, which node-redis subscribed again by itself: a subscribed connection
        // cannot ask its id, so it leaves the channel first.
        if (subscribed) await connection.unsubscribe(CHANNEL);
        subscribed = false;
        const [, asked] = await Promise.all([nameIt(), connection.sendCommand(['CLIENT', 'ID'])]);
        id = String(asked);
      }
      // An array of keys, or null after FLUSHALL.
      if (!subscribed)
        await connection.subscribe(CHANNEL, (message) => onKeys(Array.isArray(message) ? message.map(String) : null));
      subscribed = true;
      return id;
    },
    onState(listener) {
      connection.on('reconnecting', () => listener.down());
      connection.on('end', () => {
        listener.down();
        if (!closing) listener.end();
      });
      connection.on('ready', () => {
        if (!subscribed) void nameIt();
        listener.up();
      });
    },
    close: () => {
      // node-redis throws on a second disconnect() (ClientClosedError), and not as a rejection.
      if (closing) return;
      closing = true;
      void connection.disconnect().catch(() => undefined);
    },
  };
}
