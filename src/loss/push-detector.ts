/**
 * Server-pushed loss detection: Redis key tracking tells, within a round trip, when another
 * connection deletes or takes over a held key, or the key expires. Built by `createLossDetector`.
 */
import { now } from '../clock.js';
import type { Liveness } from '../engine/liveness.js';
import type { RenewBatch } from '../engine/watchdog.js';
import { setLongTimeout, type LongTimer } from '../engine/timers.js';
import { CommandRefusedError } from '../errors.js';
import type { LuaScript, ScriptReply } from '../redis/connection.js';
import { KeyTracking, TrackingUnavailableError, type TrackingListener } from './key-tracking.js';
import type { LossCheck, LossDetector, LossDetectorOptions } from './loss-detector.js';

interface Watched {
  readonly liveness: Liveness;
  readonly check: LossCheck;
  readonly since: number;
  stopped: boolean;
}

/**
 * A hold is first read on the tracking connection this long after it was taken: most holds of a
 * busy lock are released before, and cost no read at all; one lost sooner is found by renewal.
 */
const TRACK_AFTER_MS = 50;

/** Keys per check call, as for renewal. */
const BATCH_SIZE = 1_000;

/** After tracking could not be set up, it is tried again no sooner than this. */
const REOPEN_AFTER_MS = 5_000;

/**
 * Every hold is read once on the tracking connection; from then on Redis tells when its key
 * changes. The holds of such a key are checked at once (the read tracks the key again): a hold
 * whose owner is gone is lost. A change made by the holder's own client (a re-entry, a release of
 * one of several holds, another reader) is checked and found still held: never a false loss.
 * Renewals run on the tracking connection itself, whose own writes Redis does not report (see
 * `renew`), so they cost no check. Checks are batched like renewals. The final release stops the
 * watch before it is sent. When tracking breaks, every hold is checked at once, renewal finds
 * losses until it is back, and then every hold is read (tracked) again. Where tracking cannot be
 * had (no connection for it, or Redis refuses its commands), the client is told once and renewal
 * alone finds losses from then on.
 */
export class PushDetector implements LossDetector {
  readonly #byKey = new Map<string, Set<Watched>>();
  /**
   * Holds waiting for their first read, in the order they were taken. A hold released sooner
   * leaves at once: kept until the beat, every short hold would outlive the young generation and
   * cost the garbage collector a promotion.
   */
  readonly #pending = new Set<Watched>();
  #timer: LongTimer | undefined;
  readonly #checking = new Set<Watched>();
  #flushScheduled = false;
  #tracking: KeyTracking | undefined;
  #opening: Promise<void> | undefined;
  /** Tracking cannot be had here (see `#giveUp`): nothing is watched, renewal finds losses. */
  #unavailable = false;
  #openFailedAt = -Infinity;
  #reopen: LongTimer | undefined;
  /** Aborted at close(): closes the tracking connections, also those still being opened. */
  readonly #closing = new AbortController();

  constructor(
    private readonly options: LossDetectorOptions,
    /** Renews and checks on the client's own connection while tracking is down. */
    private readonly fallback: LossDetector,
  ) {}

  /** Watches a hold from TRACK_AFTER_MS on; returns what stops watching it. */
  watch(liveness: Liveness, check: LossCheck): () => void {
    this.#open();
    if (this.#unavailable) return this.fallback.watch(liveness, check);
    // Only a list entry until its first read: a hold released sooner costs next to nothing.
    const watched: Watched = { liveness, check, since: now(), stopped: false };
    this.#pending.add(watched);
    this.#timer ??= setLongTimeout(() => this.#firstReads(), TRACK_AFTER_MS);
    return () => {
      watched.stopped = true;
      if (this.#pending.delete(watched)) return;
      const left = this.#byKey.get(check.key);
      if (!left?.delete(watched)) return;
      if (left.size === 0) this.#byKey.delete(check.key);
    };
  }

  /**
   * Sends a renewal batch (see Watchdog). While tracking works it goes on the tracking connection:
   * Redis does not tell a connection of its own writes (NOLOOP), so a renewal needs no check
   * afterwards. Its write untracks the keys; the multi-key read sent right behind it, in the same
   * round trip, tracks them again. A renewed key that vanished between the two is checked at once
   * (one that was taken over in that instant is found by the next renewal).
   */
  readonly renew: RenewBatch = async (script, keys, args, deadline) => {
    const tracking = this.#tracking?.ready ? this.#tracking : undefined;
    if (!tracking) return this.fallback.renew(script, keys, args, deadline);
    // Both sent at once; both answered, or failed, before this goes on (neither left unhandled).
    const [reply, existing] = await Promise.all([
      tracking.run(script, keys.slice(0, 1), args, deadline),
      tracking.track(keys).catch(() => -1),
    ]);
    const renewed = Array.isArray(reply) && reply.every((held) => held === 1);
    if (!renewed || existing !== keys.length) this.#invalidated(keys);
    return reply;
  };

  /** Closes the tracking connections (client shutdown). */
  close(): void {
    this.#closing.abort();
    this.#timer?.cancel();
    this.#reopen?.cancel();
    this.#tracking = undefined;
  }

  /** Opens tracking on first use, and again a while after it could not be. */
  #open(): void {
    if (this.#tracking || this.#opening || this.#closing.signal.aborted || this.#unavailable) return;
    const wait = this.#openFailedAt + REOPEN_AFTER_MS - now();
    if (wait > 0) {
      // Tried again once the wait is over if anything is still watched (a later hold opens it
      // otherwise). Checked again then: a Node timer may fire a millisecond early by now().
      this.#reopen ??= setLongTimeout(() => {
        this.#reopen = undefined;
        if (this.#pending.size > 0 || this.#byKey.size > 0) this.#open();
      }, wait);
      return;
    }
    const { connection, commandTimeout } = this.options;
    this.#opening = KeyTracking.open(connection, this.#listener, commandTimeout, this.#closing.signal).then(
      (tracking) => {
        this.#opening = undefined;
        // Opened after close(): the closing signal has closed it already.
        if (!this.#closing.signal.aborted) this.#tracking = tracking;
      },
      (error: unknown) => {
        this.#opening = undefined;
        if (error instanceof CommandRefusedError) return this.#giveUp(refusedMessage(error));
        // A deployment that offers no tracking finds losses by renewal as documented: nothing to tell.
        if (error instanceof TrackingUnavailableError)
          return this.#giveUp(error.offered ? unavailableMessage(error) : undefined);
        this.#openFailedAt = now();
        // Tried again after the pause: a holder that takes nothing new would never ask.
        this.#open();
      },
    );
  }

  readonly #listener: TrackingListener = {
    invalidated: (keys) => this.#invalidated(keys),
    // The tracking connection is down: look at once (on the client's connection), then renewal.
    broken: () => this.#invalidated(null),
    // Back: read (and so track) every hold again; changes meanwhile went untold.
    restored: () => this.#invalidated(null),
    ended: (error) => {
      this.#tracking = undefined;
      if (error instanceof CommandRefusedError) return this.#giveUp(refusedMessage(error));
      // Closed for good (a client that does not reconnect): open a new one in a while.
      this.#openFailedAt = now();
      this.#open();
    },
  };

  /**
   * Tracking cannot be had: said once, and renewal alone finds losses from now on (a refused
   * command is refused again: asking anew would only open connections that cannot be used).
   */
  #giveUp(message: string | undefined): void {
    this.#unavailable = true;
    this.#timer?.cancel();
    this.#timer = undefined;
    this.#pending.clear();
    this.#byKey.clear();
    if (message !== undefined && !this.#closing.signal.aborted) this.options.warn('TRACKING_UNAVAILABLE', message);
  }

  #invalidated(keys: readonly string[] | null): void {
    for (const key of keys ?? [...this.#byKey.keys()])
      for (const watched of this.#byKey.get(key) ?? []) this.#check(watched);
  }

  #firstReads(): void {
    this.#timer = undefined;
    const time = now();
    for (const watched of this.#pending) {
      if (watched.since + TRACK_AFTER_MS > time) break;
      this.#pending.delete(watched);
      let holds = this.#byKey.get(watched.check.key);
      if (!holds) this.#byKey.set(watched.check.key, (holds = new Set()));
      holds.add(watched);
      this.#check(watched);
    }
    // A fixed beat rather than each hold's own moment: first reads cost at most one call per
    // beat, however fast holds are taken.
    if (this.#pending.size > 0) this.#timer = setLongTimeout(() => this.#firstReads(), TRACK_AFTER_MS);
  }

  #check(watched: Watched): void {
    if (watched.stopped || !watched.liveness.alive) return;
    this.#checking.add(watched);
    if (this.#flushScheduled) return;
    this.#flushScheduled = true;
    // Every check asked for until the event loop turns (a 1,000-key invalidation may come in
    // several reads) goes in one call per script.
    setImmediate(() => this.#flush());
  }

  #flush(): void {
    this.#flushScheduled = false;
    const byScript = new Map<LuaScript, Watched[]>();
    for (const watched of this.#checking) {
      const batch = byScript.get(watched.check.script) ?? [];
      if (batch.length === 0) byScript.set(watched.check.script, batch);
      batch.push(watched);
    }
    this.#checking.clear();
    for (const [script, watched] of byScript) {
      for (let i = 0; i < watched.length; i += BATCH_SIZE) void this.#send(script, watched.slice(i, i + BATCH_SIZE));
    }
  }

  async #send(script: LuaScript, batch: Watched[]): Promise<void> {
    const keys = batch.map((watched) => watched.check.key);
    const owners = batch.map((watched) => watched.check.owner);
    const tracking = this.#tracking?.ready ? this.#tracking : undefined;
    let reply: ScriptReply;
    try {
      // Tracked first, then checked, in this order on one connection: a change after the check
      // is told, one before it is seen by it.
      [, reply] = await Promise.all([
        tracking?.track(keys),
        tracking ? tracking.run(script, keys, owners) : this.options.run(script, keys, owners),
      ]);
    } catch {
      // Unknown: renewal goes on, and a tracking connection that broke checks everything when back.
      return;
    }
    const held = Array.isArray(reply) ? reply : [];
    batch.forEach((watched, i) => {
      if (watched.stopped || held[i] === 1) return;
      watched.liveness.lose('Redis told that its key was deleted, expired or taken by another owner');
    });
  }
}

const RENEWAL_ONLY =
  'a lost lock is found by its next renewal, within a third of watchdogTimeout, instead of at once. ' +
  "Set lossDetection: 'renewal' to choose that and silence this warning.";

function unavailableMessage(error: TrackingUnavailableError): string {
  return `Loss detection by push is off: Redis key tracking cannot be had here, since ${error.message}; so ${RENEWAL_ONLY}`;
}

function refusedMessage(error: CommandRefusedError): string {
  return (
    `Loss detection by push is off: ${error.message}. Key tracking needs CLIENT ID, CLIENT TRACKING, ` +
    `CLIENT CACHING and SUBSCRIBE __redis__:invalidate for latchkey's Redis user; allow them, or know that ${RENEWAL_ONLY}`
  );
}
