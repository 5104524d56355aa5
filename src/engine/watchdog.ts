import { listening } from '../diagnostics.js';
import { LockLostError } from '../errors.js';
import type { LuaScript } from '../redis/connection.js';
import type { ScriptRunner } from '../redis/script-runner.js';
import { LinkedList, type Linked } from './linked-list.js';

/**
 * One hold kept alive by the watchdog. Its renewal script takes keys in batches: `KEYS[i]` with
 * `ARGV[2i-1]` (the field proving ownership) and `ARGV[2i]` (the new lease), and answers 1 per
 * key still held, 0 per key gone.
 */
export interface RenewalTarget {
  readonly name: string;
  readonly script: LuaScript;
  readonly key: string;
  readonly field: string;
}

/** One hold the watchdog renews; `Watchdog.remove()` takes it out. */
export interface RenewalEntry extends Linked<RenewalEntry> {
  readonly target: RenewalTarget;
  /** Called once when the hold is known lost; the watchdog has already dropped it. */
  readonly onLost: (error: LockLostError) => void;
  /** Until when the lock is known to be held (the last confirmed expiry). */
  confirmedUntil: number;
  /** With maxLeaseTime: the moment after which the watchdog stops extending this hold. */
  readonly renewUntil: number;
}

export interface WatchdogOptions {
  readonly watchdogTimeout: number;
  readonly maxLeaseTime: number | undefined;
  readonly run: ScriptRunner;
  readonly batchGroup: (key: string) => string;
  readonly onRenewalError: (error: unknown, names: readonly string[]) => void;
}

/** Keys per renewal call: large enough to make N holds cost N/1000 calls, small enough not to block Redis. */
const BATCH_SIZE = 1_000;

/**
 * One renewal scheduler per client. Every `watchdogTimeout / 3` it renews all holds, one script
 * call per batch of keys that may share a call (per server, or per slot on a Cluster).
 */
export class Watchdog {
  readonly #entries = new LinkedList<RenewalEntry>();
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;
  #renewing = false;

  constructor(private readonly options: WatchdogOptions) {}

  /**
   * Starts renewing a hold whose lease (`watchdogTimeout`) was set at `acquiredAt`; `onLost` hears
   * once if it is lost. Returns the entry, for `remove()`. (`onLost` is apart from the target so
   * that callers pass their records as they are: copying one with an added property costs
   * microseconds on every acquisition.)
   */
  add(target: RenewalTarget, acquiredAt: number, onLost: (error: LockLostError) => void): RenewalEntry {
    const { watchdogTimeout, maxLeaseTime } = this.options;
    const entry: RenewalEntry = {
      target,
      onLost,
      confirmedUntil: acquiredAt + watchdogTimeout,
      renewUntil: maxLeaseTime === undefined ? Infinity : acquiredAt + maxLeaseTime,
      prev: undefined,
      next: undefined,
      listed: false,
    };
    this.#entries.append(entry);
    // The timer stays set when the last hold leaves (its round then finds nothing to renew and
    // stops): a lock()/unlock() loop should not pay for a timer each time round.
    this.#schedule(this.#period());
    return entry;
  }

  /** Stops renewing `entry` (released, lost, or given up); removing it twice is harmless. */
  remove(entry: RenewalEntry): void {
    this.#entries.remove(entry);
  }

  get size(): number {
    return this.#entries.size;
  }

  /** Stops every renewal (client shutdown); holds are left to expire. */
  stop(): void {
    this.#stopped = true;
    for (const entry of this.#entries.snapshot()) this.remove(entry);
    this.#clearTimer();
  }

  /** Renews every hold now (the timer calls this; tests and benchmarks may too). */
  async renewAll(): Promise<void> {
    this.#clearTimer();
    this.#renewing = true;
    const now = Date.now();
    const batches = new Map<string, RenewalEntry[]>();
    for (const entry of this.#entries.snapshot()) {
      if (now >= entry.renewUntil) {
        if (now >= entry.confirmedUntil) this.#lose(entry, 'it reached maxLeaseTime and expired');
        continue;
      }
      const group = `${entry.target.script.sha}|${this.options.batchGroup(entry.target.key)}`;
      let batch = batches.get(group);
      if (!batch) batches.set(group, (batch = []));
      batch.push(entry);
    }
    const calls: Promise<void>[] = [];
    for (const batch of batches.values()) {
      for (let i = 0; i < batch.length; i += BATCH_SIZE) calls.push(this.#renewBatch(batch.slice(i, i + BATCH_SIZE)));
    }
    await Promise.all(calls);
    this.#renewing = false;
    if (this.#entries.size > 0) this.#schedule(this.#nextDelay(now));
  }

  async #renewBatch(batch: RenewalEntry[]): Promise<void> {
    const started = Date.now();
    const keys = batch.map((entry) => entry.target.key);
    const args: (string | number)[] = [];
    for (const entry of batch) {
      args.push(entry.target.field, Math.max(1, Math.min(this.options.watchdogTimeout, entry.renewUntil - started)));
    }
    // A renewal may not outlive the earliest lease it protects: past that, the lock is lost anyway.
    const deadline = Math.min(...batch.map((entry) => entry.confirmedUntil));
    try {
      const reply = await this.options.run(batch[0]!.target.script, keys, args, deadline);
      const renewed = Array.isArray(reply) ? reply : [];
      batch.forEach((entry, i) => {
        if (!entry.listed) return;
        if (renewed[i] === 1) {
          entry.confirmedUntil = started + Number(args[2 * i + 1]);
          listening('renew')?.publish({ name: entry.target.name, key: entry.target.key });
        } else {
          this.#lose(entry, 'renewal found it no longer held');
        }
      });
    } catch (error) {
      this.options.onRenewalError(
        error,
        batch.map((entry) => entry.target.name),
      );
      const now = Date.now();
      for (const entry of batch) {
        if (entry.listed && now >= entry.confirmedUntil) {
          this.#lose(entry, 'renewal kept failing until its lease ran out', error);
        }
      }
    }
  }

  #lose(entry: RenewalEntry, why: string, cause?: unknown): void {
    this.remove(entry);
    const error = new LockLostError(
      `Lock "${entry.target.name}" was lost: ${why}`,
      cause === undefined ? undefined : { cause },
    );
    entry.onLost(error);
  }

  #period(): number {
    return Math.max(1, Math.floor(this.options.watchdogTimeout / 3));
  }

  /**
   * One period after the round that `roundStarted` (so the time a round takes does not stretch the
   * period); sooner when a hold's confirmed lease ends before that (failing renewals).
   */
  #nextDelay(roundStarted: number): number {
    const now = Date.now();
    let delay = Math.max(0, this.#period() - (now - roundStarted));
    for (let entry = this.#entries.head; entry; entry = entry.next)
      delay = Math.min(delay, Math.max(0, entry.confirmedUntil - now));
    return delay;
  }

  #schedule(delay: number): void {
    if (this.#stopped || this.#renewing || this.#timer !== undefined) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      void this.renewAll();
    }, delay);
    // Renewal alone must not keep a process alive: the user's own work does that.
    this.#timer.unref();
  }

  #clearTimer(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}
