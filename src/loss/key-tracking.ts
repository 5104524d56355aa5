/**
 * Redis key tracking on two connections of latchkey's own: what the push detector reads keys on,
 * and where Redis sends word that they changed. Speaks to the adapters through the TrackingLink port.
 */
import { randomBytes } from 'node:crypto';
import { CommandRefusedError } from '../errors.js';
import type { RedisConnection, TrackingLink } from '../redis/connection.js';
import { createScriptRunner, type ScriptRunner } from '../redis/script-runner.js';
import { classifyRefusal } from '../redis/script-sender.js';

/** Who hears what key tracking learns. */
export interface TrackingListener {
  /** Redis says these keys changed (null: all of them may have, e.g. FLUSHALL). */
  invalidated(keys: readonly string[] | null): void;
  /** Tracking broke: changes go untold until `restored()`. */
  broken(): void;
  /** Tracking works again (or for the first time): whatever changed before went untold. */
  restored(): void;
  /**
   * This tracking is over (it has been told `broken()` first): a connection closed for good, or,
   * with a CommandRefusedError, Redis refused a command tracking needs when it was set up again.
   */
  ended(error?: unknown): void;
}

/** Tracking cannot be had with this client and deployment; the message says why. */
export class TrackingUnavailableError extends Error {
  /**
   * The deployment offers no tracking at all (a Cluster, node-redis Sentinel, a connection without
   * tracking links): renewal finds losses there by design, as the `lossDetection` option says.
   */
  offered = true;
}

/**
 * Tracking with `CLIENT TRACKING ON REDIRECT <sink> OPTIN NOLOOP`: `reader` reads the keys Redis
 * is to track, `sink` receives the invalidations, as messages on `__redis__:invalidate` (both
 * links speak RESP2, whatever the user's client speaks: under RESP3 Redis would send them as
 * pushes, which ioredis 6 drops). The sink tells its id before it subscribes (a subscribed RESP2
 * connection cannot). Whenever either connection is lost, the listener hears `broken()`; once both
 * are back and tracking points at the sink again, `restored()`.
 */
export class KeyTracking {
  /** Runs a script on the reader, untracked (see `track`). Fails at once while it is down. */
  readonly run: ScriptRunner;
  #ready = false;
  /** Counts losses, so that a restore overtaken by another loss does not claim to be ready. */
  #losses = 0;
  #restoring: Promise<void> = Promise.resolve();
  /** Why the last restore failed (a CommandRefusedError ends tracking). */
  #failure: unknown;
  /** Tracking was set up at least once (open() has resolved). */
  #opened = false;
  #stopListening = (): void => undefined;

  private constructor(
    private readonly reader: TrackingLink,
    private readonly sink: TrackingLink,
    private readonly listener: TrackingListener,
    commandTimeout: number,
  ) {
    this.run = createScriptRunner(reader, commandTimeout);
  }

  /**
   * Opens both connections. Rejects with TrackingUnavailableError when the client offers none for
   * tracking (a Cluster) or cannot make one, with CommandRefusedError when Redis refuses a command
   * tracking needs. An abort of `closing` (the client shutting down) closes them, also while they
   * are being opened.
   */
  static async open(
    connection: RedisConnection,
    listener: TrackingListener,
    commandTimeout: number,
    closing: AbortSignal,
  ): Promise<KeyTracking> {
    const tag = randomBytes(8).toString('hex');
    const [sinkLink, readerLink] = openLinks(
      connection,
      [`latchkey-invalidations-${tag}`, `latchkey-tracking-${tag}`],
      closing,
    );
    const links = await Promise.allSettled([sinkLink, readerLink]);
    const [sink, reader] = links.map((link) => (link.status === 'fulfilled' ? link.value : undefined));
    if (!sink || !reader) {
      sink?.close();
      reader?.close();
      throw (links.find((link) => link.status === 'rejected') as PromiseRejectedResult).reason;
    }
    const tracking = new KeyTracking(reader, sink, listener, commandTimeout);
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
      if (tracking.#failure instanceof CommandRefusedError) throw tracking.#failure;
      throw new Error('Redis key tracking could not be set up', { cause: tracking.#failure });
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
        await this.#point();
      } catch (error) {
        this.#failure = error;
        // Refused once set up before (an ACL changed): it would be refused at every reconnect.
        if (error instanceof CommandRefusedError && this.#opened) {
          this.close();
          this.listener.ended(error);
        }
        return; // otherwise the next reconnect tries again; renewal finds losses meanwhile
      }
      this.#opened = true;
      if (losses !== this.#losses || this.#ready) return;
      this.#ready = true;
      this.listener.restored();
    });
    return this.#restoring;
  }

  async #point(): Promise<void> {
    let id: string;
    try {
      id = await this.sink.subscribeInvalidations((keys) => this.listener.invalidated(keys));
    } catch (error) {
      throw classifyRefusal(error, 'CLIENT ID or SUBSCRIBE __redis__:invalidate');
    }
    await this.#send(['CLIENT', 'TRACKING', 'ON', 'REDIRECT', id, 'OPTIN', 'NOLOOP']);
    // `track()` needs CLIENT CACHING: a server that refuses it is found now, not at each read.
    // The PING after it reads no key and ends what CACHING yes applies to.
    await Promise.all([this.#send(['CLIENT', 'CACHING', 'YES']), this.#send(['PING'])]);
  }

  async #send(args: readonly string[]): Promise<unknown> {
    try {
      return await this.reader.command(args);
    } catch (error) {
      throw classifyRefusal(error, args.slice(0, 2).join(' '));
    }
  }
}

/** Starts opening one link per name; throws TrackingUnavailableError where the client offers none. */
function openLinks(
  connection: RedisConnection,
  names: readonly string[],
  closing: AbortSignal,
): Promise<TrackingLink>[] {
  const links: Promise<TrackingLink>[] = [];
  const closeMade = (): void => {
    for (const link of links)
      void link.then(
        (made) => made.close(),
        () => undefined,
      );
  };
  for (const name of names) {
    let link: Promise<TrackingLink> | undefined;
    try {
      link = connection.openTrackingLink?.(name, closing);
    } catch (error) {
      closeMade();
      // The client refused to make one (options it cannot combine): the same at every try.
      const detail = error instanceof Error ? error.message : String(error);
      throw new TrackingUnavailableError(`the client could not make a connection for it (${detail})`, { cause: error });
    }
    if (link === undefined) {
      closeMade();
      const none = new TrackingUnavailableError(
        "this client offers no connection for it (key tracking needs connections of latchkey's own that serve " +
          'every key: a standalone server, or Sentinel through ioredis; not a Cluster, node-redis Sentinel or a ' +
          'RedisConnection without openTrackingLink)',
      );
      none.offered = false;
      throw none;
    }
    links.push(link);
  }
  return links;
}
