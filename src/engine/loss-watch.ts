import type { LuaScript, ScriptArg, ScriptReply } from '../redis/connection.js';
import type { Liveness } from './liveness.js';
import { setLongTimeout, type LongTimer } from './timers.js';

/**
 * A connection of the adapter's own on which Redis tracks every key a script reads (client-side
 * caching: `CLIENT TRACKING ON REDIRECT <listener> NOLOOP`), and tells when another connection
 * changes one, or it expires. Its own writes tell nothing (NOLOOP).
 */
export interface KeyTracker {
  run(script: LuaScript, keys: readonly string[], args: readonly ScriptArg[]): Promise<ScriptReply>;
}

/** What a hold is checked with: a read-only batch script answering 1 per key still held by its owner. */
export interface LossCheck {
  readonly script: LuaScript;
  readonly key: string;
  readonly owner: string;
}

interface Watched {
  readonly liveness: Liveness;
  readonly check: LossCheck;
  readonly since: number;
  stopped: boolean;
}

/**
 * A hold is read on the tracking connection this long after it was taken: most holds of a busy
 * lock are released before, and cost no read at all; a hold lost sooner is told by renewal.
 */
const TRACK_AFTER_MS = 50;

/** Keys per check call, as for renewal. */
const BATCH_SIZE = 1_000;

/**
 * Server-pushed loss detection. Every hold is read once on a tracking connection; from then on
 * Redis tells, within a round trip, when another connection deletes or takes over its key, or it
 * expires. Each such key's holds are checked at once (the read tracks the key again): a hold whose
 * owner is gone is lost. A change made by the holder itself (a re-entry, a release of one of
 * several holds) is checked and found still held: never a false loss. The final release stops the
 * watch before it is sent. When tracking breaks, every hold is checked again once it is back;
 * meanwhile renewal finds losses as before.
 */
export class LossWatch {
  readonly #byKey = new Map<string, Set<Watched>>();
  /** Holds waiting for their first read, in the order they were taken. */
  #pending: Watched[] = [];
  #timer: LongTimer | undefined;
  #checking = new Set<Watched>();
  #flushScheduled = false;

  constructor(private readonly tracker: KeyTracker) {}

  /** Watches a hold from TRACK_AFTER_MS on; returns what stops watching it. */
  watch(liveness: Liveness, check: LossCheck): () => void {
    const watched: Watched = { liveness, check, since: Date.now(), stopped: false };
    let set = this.#byKey.get(check.key);
    if (!set) this.#byKey.set(check.key, (set = new Set()));
    set.add(watched);
    this.#pending.push(watched);
    if (this.#timer === undefined) this.#timer = setLongTimeout(() => this.#firstReads(), TRACK_AFTER_MS);
    return () => {
      watched.stopped = true;
      const holds = this.#byKey.get(check.key);
      holds?.delete(watched);
      if (holds?.size === 0) this.#byKey.delete(check.key);
    };
  }

  /** Redis says these keys changed (null: all of them, e.g. FLUSHALL). */
  invalidated(keys: readonly string[] | null): void {
    const keysToCheck = keys ?? [...this.#byKey.keys()];
    for (const key of keysToCheck) for (const watched of this.#byKey.get(key) ?? []) this.#check(watched);
  }

  /** Tracking was lost and is back: whatever changed meanwhile went untold. */
  reset(): void {
    this.invalidated(null);
  }

  #firstReads(): void {
    this.#timer = undefined;
    const now = Date.now();
    let i = 0;
    for (; i < this.#pending.length && this.#pending[i]!.since + TRACK_AFTER_MS <= now; i++) {
      if (!this.#pending[i]!.stopped) this.#check(this.#pending[i]!);
    }
    this.#pending = this.#pending.slice(i);
    const next = this.#pending[0];
    if (next) this.#timer = setLongTimeout(() => this.#firstReads(), next.since + TRACK_AFTER_MS - now);
  }

  #check(watched: Watched): void {
    if (watched.stopped || !watched.liveness.alive) return;
    this.#checking.add(watched);
    if (this.#flushScheduled) return;
    this.#flushScheduled = true;
    // Every check asked for in this tick goes in one call per script.
    process.nextTick(() => void this.#flush());
  }

  async #flush(): Promise<void> {
    this.#flushScheduled = false;
    const byScript = new Map<LuaScript, Watched[]>();
    for (const watched of this.#checking) {
      const batch = byScript.get(watched.check.script) ?? [];
      if (batch.length === 0) byScript.set(watched.check.script, batch);
      batch.push(watched);
    }
    this.#checking.clear();
    const calls: Promise<void>[] = [];
    for (const [script, watched] of byScript) {
      for (let i = 0; i < watched.length; i += BATCH_SIZE)
        calls.push(this.#send(script, watched.slice(i, i + BATCH_SIZE)));
    }
    await Promise.all(calls);
  }

  async #send(script: LuaScript, batch: Watched[]): Promise<void> {
    let reply: ScriptReply;
    try {
      reply = await this.tracker.run(
        script,
        batch.map((watched) => watched.check.key),
        batch.map((watched) => watched.check.owner),
      );
    } catch {
      // Tracking is down: reset() checks everything once it is back; renewal goes on meanwhile.
      return;
    }
    const held = Array.isArray(reply) ? reply : [];
    batch.forEach((watched, i) => {
      if (watched.stopped || held[i] === 1) return;
      watched.liveness.lose('Redis told that its key was deleted, expired or taken by another owner');
    });
  }
}
