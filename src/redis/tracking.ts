import { randomBytes } from 'node:crypto';
import type { RedisConnection, TrackingLink } from './connection.js';
import { createScriptRunner, type ScriptRunner } from './script-runner.js';

/** Who hears what key tracking learns. */
export interface TrackingListener {
  /** Redis says these keys changed (null: all of them may have, e.g. FLUSHALL). */
  invalidated(keys: readonly string[] | null): void;
  /** Tracking broke: changes go untold until `restored()`. */
  broken(): void;
  /** Tracking works again (or for the first time): whatever changed before went untold. */
  restored(): void;
  /** A connection closed for good: this tracking is over (it has been told `broken()` first). */
  ended(): void;
}

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

/**
 * Key tracking (Redis' client-side caching) on two connections of latchkey's own, never the
 * user's: `reader` reads the keys Redis tracks (`CLIENT TRACKING ON REDIRECT <sink> OPTIN
 * NOLOOP`), `sink` receives the invalidations. The reader finds the
 * sink by its connection name, since a connection in subscriber mode cannot say its own id.
 * Whenever either connection is lost, the listener hears `broken()`; once both are back and
 * tracking points at the sink again, `restored()`.
 */
export class KeyTracking {
  /** Runs a script on the reader, untracked (see `track`). Fails at once while it is down. */
  readonly run: ScriptRunner;
  #ready = false;
  /** Counts losses, so that a restore overtaken by another loss does not claim to be ready. */
  #losses = 0;
  #restoring: Promise<void> = Promise.resolve();
  #stopListening = (): void => undefined;

  private constructor(
    private readonly reader: TrackingLink,
    private readonly sink: TrackingLink,
    private readonly sinkName: string,
    private readonly listener: TrackingListener,
    commandTimeout: number,
  ) {
    this.run = createScriptRunner(reader, commandTimeout);
  }

  /**
   * Opens both connections; undefined when the connection offers no tracking (a Cluster). An
   * abort of `closing` (the client shutting down) closes them, also while they are being opened.
   */
  static async open(
    connection: RedisConnection,
    listener: TrackingListener,
    commandTimeout: number,
    closing: AbortSignal,
  ): Promise<KeyTracking | undefined> {
    const sinkName = `latchkey-invalidations-${randomBytes(8).toString('hex')}`;
    const sinkLink = connection.openTrackingLink?.(sinkName, closing);
    const readerLink = connection.openTrackingLink?.(`latchkey-tracking-${sinkName.slice(-16)}`, closing);
    if (sinkLink === undefined || readerLink === undefined) return undefined;
    const links = await Promise.allSettled([sinkLink, readerLink]);
    const [sink, reader] = links.map((link) => (link.status === 'fulfilled' ? link.value : undefined));
    if (!sink || !reader) {
      sink?.close();
      reader?.close();
      throw (links.find((link) => link.status === 'rejected') as PromiseRejectedResult).reason;
    }
    const tracking = new KeyTracking(reader, sink, sinkName, listener, commandTimeout);
    // Closed on shutdown even while it is still being set up: its commands may never be answered.
    const close = (): void => tracking.close();
    closing.addEventListener('abort', close);
    tracking.#stopListening = () => closing.removeEventListener('abort', close);
    if (closing.aborted) {
      tracking.close();
      closing.throwIfAborted();
    }
    const down = (): void => tracking.#lost();
    const up = (): void => void tracking.#restore();
    const end = (): void => {
      tracking.#lost();
      tracking.close();
      listener.ended();
    };
    reader.onState({ up, down, end });
    sink.onState({ up, down, end });
    await tracking.#restore();
    if (!tracking.#ready) {
      tracking.close();
      throw new Error('Redis key tracking could not be set up');
    }
    return tracking;
  }

  /**
   * Has Redis track `keys` from now on, and resolves with how many of them exist: one multi-key
   * read right after `CLIENT CACHING yes` (tracking is OPTIN). A script's reads are never what is
   * tracked: Redis 7.0 tracks every key a script declares at each read command it runs, so a
   * batch script read per key would cost Redis keys x reads (80 ms for 1,000 keys). A script sent
   * right after this call, on the same connection, reads the keys as they are once tracked:
   * nothing that changes them goes untold.
   */
  track(keys: readonly string[]): Promise<number> {
    const caching = this.reader.command(['CLIENT', 'CACHING', 'YES']);
    const read = this.reader.command(['EXISTS', ...keys]);
    return Promise.all([caching, read]).then(([, existing]) => Number(existing));
  }

  /** Both connections are up and the reader's reads are tracked. */
  get ready(): boolean {
    return this.#ready;
  }

  close(): void {
    this.#stopListening();
    this.#ready = false;
    this.reader.close();
    this.sink.close();
  }

  #lost(): void {
    this.#losses++;
    if (!this.#ready) return;
    this.#ready = false;
    this.listener.broken();
  }

  /** Subscribes the sink and points the reader's tracking at it; one restore at a time. */
  #restore(): Promise<void> {
    this.#restoring = this.#restoring.then(async () => {
      const losses = this.#losses;
      try {
        await this.sink.subscribeInvalidations((keys) => this.listener.invalidated(keys));
        await this.#point();
      } catch {
        return; // the next reconnect tries again; renewal finds losses meanwhile
      }
      if (losses !== this.#losses || this.#ready) return;
      this.#ready = true;
      this.listener.restored();
    });
    return this.#restoring;
  }

  async #point(): Promise<void> {
    const list = String(await this.reader.command(['CLIENT', 'LIST', 'TYPE', 'pubsub']));
    const line = list.split('\n').find((entry) => entry.includes(` name=${this.sinkName} `));
    const id = line === undefined ? undefined : /(?:^|\s)id=(\d+)/.exec(line)?.[1];
    if (id === undefined) throw new Error('the invalidation connection is not subscribed');
    await this.reader.command(['CLIENT', 'TRACKING', 'ON', 'REDIRECT', id, 'OPTIN', 'NOLOOP']);
  }
}
