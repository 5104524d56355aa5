/**
 * The watchdog: one per client, renewing every hold a third of the way through its lease, in
 * batches of up to 1,000 keys per server or Cluster primary; it reports only what Redis said.
 */
import { now } from '../clock.js';
import { listening } from '../diagnostics.js';
import type { LuaScript, ScriptArg, ScriptReply } from '../redis/connection.js';
import { DeadlineQueue, type Due } from './deadline-queue.js';
import { provenUntil, type Liveness } from './liveness.js';

/**
 * How one hold is renewed. The script takes holds in batches: `KEYS[1]` routes the call (the
 * batch's first key), `ARGV` holds a triple per hold (key, owner, new lease in ms), and it answers
 * per hold 1 (still held, lease reset), 0 (gone) or -1 (its key is not on the node that ran the
 * call: a Cluster slot moved).
 */
export interface RenewalTarget {
  readonly script: LuaScript;
  readonly key: string;
  readonly owner: string;
}

/** One hold the watchdog renews; `Watchdog.remove()` takes it out. */
export interface Renewal extends Due {
  readonly liveness: Liveness;
  readonly target: RenewalTarget;
  /** The hold is not extended past this (its fixed lease's end, or maxLeaseTime). */
  readonly renewUntil: number;
  /** When the next renewal is due (`at`): a third of the way through the time proven last. */
  at: number;
  removed: boolean;
  /**
   * Its last release is in flight: renewed until it lands (a release that waits out a failover or a
   * slot migration must not let the lease lapse), and "gone" is no loss (the release may have landed).
   */
  releasing: boolean;
}

/**
 * Sends one renewal batch: `keys` are the batch's keys (the first routes the call, see
 * RenewalTarget), `args` its triples; cut at `deadline` (epoch ms).
 */
export type RenewBatch = (
  script: LuaScript,
  keys: readonly string[],
  args: readonly ScriptArg[],
  deadline: number,
) => Promise<ScriptReply>;

export interface WatchdogOptions {
  readonly watchdogTimeout: number;
  readonly renew: RenewBatch;
  /** Holds whose keys map to one group may share a call: one server, or one Cluster node. */
  readonly batchGroup: (key: string) => string;
  readonly onRenewalError: (error: unknown, names: readonly string[]) => void;
}

/** Keys per renewal call: large enough to make N holds cost N/1000 calls, small enough not to block Redis. */
const BATCH_SIZE = 1_000;

/**
 * One renewal scheduler per client. A hold is renewed once a third of the time proven for it has
 * passed; a round renews every hold due within the next half period too, one script call per batch
 * of keys that may share a call (per server, or per node of a Cluster), so that N holds taken
 * at any moments cost about N/1000 calls per period. It only renews: what Redis answers goes to
 * each hold's Liveness, which decides whether the hold is lost.
 */
export class Watchdog {
  /** Holds waiting for their next renewal, by when it is due; those being renewed are out of it. */
  readonly #due = new DeadlineQueue<Renewal>((time) => void this.#round(time + this.#period() / 2));
  /** Holds whose renewal is on its way. */
  readonly #renewing = new Set<Renewal>();

  constructor(private readonly options: WatchdogOptions) {}

  /**
   * Renews `liveness`, proven from a grant sent at `since`, until `renewUntil` (Infinity: until
   * removed). Returns what stops renewing it; undefined when the grant's lease already reaches
   * `renewUntil` (a fixed lease taken directly).
   */
  add(liveness: Liveness, target: RenewalTarget, since: number, renewUntil = Infinity): Renewal | undefined {
    if (provenToEnd(liveness, since, renewUntil)) return undefined;
    const renewal: Renewal = {
      liveness,
      target,
      renewUntil,
      // From the grant's send time, not now: a little sooner, never later than due.
      at: renewalDue(since, liveness),
      slot: -1,
      removed: false,
      releasing: false,
    };
    this.#due.add(renewal);
    return renewal;
  }

  /** Stops renewing (released, or given up); removing twice is harmless. A lost hold drops out by itself. */
  remove(renewal: Renewal): void {
    renewal.removed = true;
    this.#due.remove(renewal);
  }

  /** Holds renewed now. */
  get size(): number {
    for (const renewal of [...this.#due.items]) if (!renewal.liveness.alive) this.remove(renewal);
    let renewing = 0;
    for (const renewal of this.#renewing) if (!renewal.removed && renewal.liveness.alive) renewing++;
    return this.#due.size + renewing;
  }

  /** Stops every renewal (client shutdown); holds are left to expire. */
  stop(): void {
    this.#due.stop();
    for (const renewal of [...this.#due.items, ...this.#renewing]) this.remove(renewal);
  }

  /** Renews every hold now, due or not (tests and benchmarks call this). */
  renewAll(): Promise<void> {
    return this.#round(Infinity);
  }

  #period(): number {
    return Math.max(1, Math.floor(this.options.watchdogTimeout / 3));
  }

  /** Renews every hold due by `horizon`: one call per batch of holds that may share one. */
  async #round(horizon: number): Promise<void> {
    const batches = new Map<string, Renewal[]>();
    for (let renewal = this.#due.takeDue(horizon); renewal; renewal = this.#due.takeDue(horizon)) {
      if (!renewal.liveness.alive) continue;
      this.#renewing.add(renewal);
      const group = `${renewal.target.script.sha}|${this.options.batchGroup(renewal.target.key)}`;
      const batch = batches.get(group) ?? [];
      if (batch.length === 0) batches.set(group, batch);
      batch.push(renewal);
    }
    const calls: Promise<void>[] = [];
    for (const batch of batches.values()) {
      for (let i = 0; i < batch.length; i += BATCH_SIZE) calls.push(this.#renew(batch.slice(i, i + BATCH_SIZE)));
    }
    await Promise.all(calls);
    for (const batch of batches.values()) for (const renewal of batch) this.#renewing.delete(renewal);
  }

  async #renew(batch: Renewal[]): Promise<void> {
    const sentAt = now();
    const leases = batch.map((renewal) =>
      Math.max(1, Math.min(this.options.watchdogTimeout, renewal.renewUntil - sentAt)),
    );
    const args = batch.flatMap((renewal, i) => [renewal.target.key, renewal.target.owner, leases[i]!]);
    // A renewal that gets no answer gives up halfway to the earliest lease it protects, so that
    // there is time to try again before the hold is lost.
    const earliest = Math.min(...batch.map((renewal) => renewal.liveness.validUntil));
    const deadline = sentAt + Math.max(0, earliest - sentAt) / 2;
    let renewed: unknown[];
    try {
      const keys = batch.map((renewal) => renewal.target.key);
      const reply = await this.options.renew(batch[0]!.target.script, keys, args, deadline);
      renewed = Array.isArray(reply) ? reply : [];
    } catch (error) {
      return this.#retrySoon(batch, error);
    }
    const moved: Renewal[] = [];
    batch.forEach((renewal, i) => {
      if (renewal.removed) return; // released meanwhile: whatever Redis said is no news
      if (renewed[i] === -1) return void moved.push(renewal);
      if (renewed[i] !== 1) {
        // Gone: lost, unless its release landed. Kept until the release settles, and renewed
        // meanwhile (the release may not have run yet: see Renewal.releasing).
        if (!renewal.releasing) renewal.liveness.lose('renewal found it no longer held');
        else this.#requeue(renewal, renewalDue(sentAt, renewal.liveness));
        return;
      }
      renewal.liveness.confirm(provenUntil(sentAt, leases[i]!));
      listening('renew')?.publish({ ...renewal.liveness.hold });
      this.#afterRenewal(renewal, sentAt);
    });
    if (moved.length === 0) return;
    // A call that named the key itself was routed to its node: the slot is moving right now.
    if (batch.length === 1) return this.#retrySoon(moved, new Error('its Cluster slot is moving'));
    // Keys whose slot moved to another node: each on its own, so that the client follows the
    // redirection and learns the new slot map, which the next round's batches then follow.
    await Promise.all(moved.map((renewal) => this.#renew([renewal])));
  }

  /** A renewal failed: try again soon; the Liveness reports the hold lost if its proven time runs out first. */
  #retrySoon(batch: readonly Renewal[], error: unknown): void {
    this.options.onRenewalError(
      error,
      batch.map((renewal) => renewal.liveness.hold.name),
    );
    const retryAt = now() + Math.min(1_000, this.#period());
    for (const renewal of batch) {
      this.#requeue(renewal, Math.min(retryAt, Math.max(now(), renewal.liveness.validUntil - 1)));
    }
  }

  #afterRenewal(renewal: Renewal, sentAt: number): void {
    // Proven to its end: nothing left to renew; its Liveness ends it when the time comes.
    if (provenToEnd(renewal.liveness, sentAt, renewal.renewUntil)) renewal.removed = true;
    else this.#requeue(renewal, renewalDue(sentAt, renewal.liveness));
  }

  /** Back in the queue, due at `at`, unless it was removed or lost meanwhile. */
  #requeue(renewal: Renewal, at: number): void {
    if (renewal.removed || !renewal.liveness.alive || renewal.slot >= 0) return;
    renewal.at = at;
    this.#due.add(renewal);
  }
}

/**
 * The lease last set, by a call sent at `from`, reaches `renewUntil`: no renewal can prove more.
 * (Measured against the end itself, proven time always falls short of it by the drift allowance.)
 */
function provenToEnd(liveness: Liveness, from: number, renewUntil: number): boolean {
  return renewUntil !== Infinity && liveness.validUntil >= provenUntil(from, renewUntil - from);
}

/** A third of the way from `from` to the end of what is proven. */
function renewalDue(from: number, liveness: Liveness): number {
  return from + (liveness.validUntil - from) / 3;
}
