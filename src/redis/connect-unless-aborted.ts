/**
 * Connecting a connection of latchkey's own (a tracking link) so that a client shutting down
 * meanwhile closes it rather than leave it reconnecting to a server that went away.
 */

/**
 * Connects one of a tracking link's connections. If `signal` (the client shutting down) aborts
 * first, also while it is still connecting, the connection is closed instead and this rejects once
 * it is, so that nothing reconnects to a server that went away. `disconnect` is called at most
 * once (node-redis throws on a second call).
 */
export async function connectUnlessAborted(
  connect: () => Promise<unknown>,
  disconnect: () => Promise<unknown> | void,
  signal: AbortSignal,
): Promise<void> {
  let closing: Promise<unknown> | undefined;
  const close = (): Promise<unknown> => (closing ??= Promise.resolve(disconnect()));
  const onAbort = (): void => void close();
  signal.addEventListener('abort', onAbort);
  try {
    await connect();
    signal.throwIfAborted();
  } catch (error) {
    await close();
    throw error;
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}
