/** How an ioredis client (5 or 6) gives latchkey a connection for key tracking (see TrackingLink). */
import { connectUnlessAborted } from './connect-unless-aborted.js';
import type { TrackingLink } from './connection.js';
import { evalWithFallback, type ScriptSender } from './script-sender.js';

/** The ioredis connection a tracking link is made of (a `duplicate()` of the user's client). */
export interface IoredisTrackingConnection {
  connect(): Promise<unknown>;
  call(command: string, ...args: string[]): Promise<unknown>;
  evalsha(sha: string, numKeys: number, ...keysAndArgs: (string | number)[]): Promise<unknown>;
  eval(source: string, numKeys: number, ...keysAndArgs: (string | number)[]): Promise<unknown>;
  subscribe(channel: string): Promise<unknown>;
  on(event: 'messageBuffer', listener: (channel: Buffer, message: Buffer[] | Buffer | null) => void): unknown;
  on(event: 'ready' | 'close' | 'connect' | 'end', listener: () => void): unknown;
  on(event: 'error', listener: (error: Error) => void): unknown;
  readonly stream?: { unref?(): void };
  disconnect(): void;
}

/**
 * The options that make a duplicate fit for tracking (see TrackingLink). `protocol: 2`: ioredis 6
 * speaks RESP3 by default and drops the invalidation pushes Redis then sends (ioredis 5 has no
 * such option, and speaks RESP2).
 */
export const TRACKING_LINK_OPTIONS = {
  protocol: 2,
  lazyConnect: true,
  autoResubscribe: false,
  enableOfflineQueue: false,
  autoResendUnfulfilledCommands: false,
} as const;

/** A TrackingLink over an ioredis duplicate, once connected; closed instead if `signal` aborts first. */
export async function ioredisTrackingLink(
  connection: IoredisTrackingConnection,
  signal: AbortSignal,
): Promise<TrackingLink> {
  // Errors surface through the calls that fail; the listener keeps them from crashing the process.
  connection.on('error', () => undefined);
  // Each new socket: latchkey's own connection serves the user's work, it is not work.
  connection.on('connect', () => connection.stream?.unref?.());
  await connectUnlessAborted(
    () => connection.connect(),
    () => connection.disconnect(),
    signal,
  );
  let onKeys: ((keys: readonly string[] | null) => void) | undefined;
  // Invalidations carry an array of keys (null after FLUSHALL): only the Buffer event keeps it.
  connection.on('messageBuffer', (_channel, message) => {
    if (message === null || Array.isArray(message)) onKeys?.(message?.map(String) ?? null);
  });
  let closing = false;
  /** This connection's id while it is connected (asked again on each new socket). */
  let id: string | undefined;
  connection.on('close', () => (id = undefined));
  const sender: ScriptSender = {
    evalsha: (script, keys, args) => connection.evalsha(script.sha, keys.length, ...keys, ...args),
    eval: (script, keys, args) => connection.eval(script.source, keys.length, ...keys, ...args),
  };
  return {
    command: ([command, ...args]) => connection.call(command!, ...args),
    evalScript: (script, keys, args) => evalWithFallback(sender, script, keys, args),
    async subscribeInvalidations(listener) {
      onKeys = listener;
      // Asked before subscribing (a subscribed connection cannot): after a reconnect the new socket
      // is not subscribed, since autoResubscribe is off.
      const known = (id ??= String(await connection.call('CLIENT', 'ID')));
      await connection.subscribe('__redis__:invalidate');
      return known;
    },
    onState(listener) {
      connection.on('close', () => listener.down());
      connection.on('ready', () => listener.up());
      connection.on('end', () => {
        if (!closing) listener.end();
      });
    },
    close: () => {
      if (closing) return;
      closing = true;
      connection.disconnect();
    },
  };
}
