import { listening } from '../diagnostics.js';
import { LockLostError } from '../errors.js';
import type { RenewalEntry, RenewalTarget, Watchdog } from './watchdog.js';

/** What a primitive tells the registry about one acquisition. */
export interface HoldSpec extends RenewalTarget {
  /** Explicit lease (ms): the hold expires by itself. Left out: the watchdog renews it. */
  readonly leaseTime: number | undefined;
}

/** The local record of one owner's holds on one key. */
export class Hold {
  count = 0;
  /** Its place in the watchdog, while renewed. */
  renewal: RenewalEntry | undefined;
  expiryTimer: NodeJS.Timeout | undefined;
  /** Made on first use: `lock()`/`unlock()` loops never ask for a signal, and need not pay for one. */
  #controller: AbortController | undefined;
  #lost = false;
  #lostReason: unknown;

  constructor(readonly spec: HoldSpec) {}

  /** Aborts (with the LockLostError) once the hold is known lost. */
  get signal(): AbortSignal {
    if (!this.#controller) {
      this.#controller = new AbortController();
      if (this.#lost) this.#controller.abort(this.#lostReason);
    }
    return this.#controller.signal;
  }

  get isLost(): boolean {
    return this.#lost;
  }

  /** Marks the hold lost; false when it already was. */
  markLost(reason: unknown): boolean {
    if (this.#lost) return false;
    this.#lost = true;
    this.#lostReason = reason;
    this.#controller?.abort(reason);
    return true;
  }

  /** Stops renewal and the expiry timer. */
  stop(watchdog: Watchdog): void {
    if (this.renewal) watchdog.remove(this.renewal);
    this.renewal = undefined;
    if (this.expiryTimer !== undefined) clearTimeout(this.expiryTimer);
    this.expiryTimer = undefined;
  }
}

/**
 * Every hold of one client, by key and owner: re-entrant acquisitions share one record, one
 * watchdog registration and one lost-signal; the last release stops renewal.
 */
export class Holds {
  /**
   * By key: its one hold (by far the usual case, so a lock()/unlock() loop makes no Map per
   * acquisition), or its holds by field (owner) when several owners of this client hold it (a
   * semaphore's permits, a read lock's readers). Keys and fields are long-lived strings, so
   * lookups hash nothing new.
   */
  readonly #holds = new Map<string, Hold | Map<string, Hold>>();

  constructor(
    private readonly watchdog: Watchdog,
    private readonly onLost: (name: string, error: LockLostError) => void,
  ) {}

  get(key: string, field: string): Hold | undefined {
    const held = this.#holds.get(key);
    if (held instanceof Hold) return held.spec.field === field ? held : undefined;
    return held?.get(field);
  }

  /** Records an acquisition confirmed by Redis at `acquiredAt`. */
  acquired(spec: HoldSpec, acquiredAt: number): Hold {
    let hold = this.get(spec.key, spec.field);
    if (!hold) {
      hold = new Hold(spec);
      this.#add(hold);
    }
    hold.count++;
    const current = hold;
    if (spec.leaseTime === undefined) {
      if (current.expiryTimer !== undefined) clearTimeout(current.expiryTimer);
      current.expiryTimer = undefined;
      current.renewal ??= this.watchdog.add(spec, acquiredAt, (error) => this.lost(current, error));
    } else if (current.renewal === undefined) {
      // An explicit lease: the hold is known lost the moment the lease runs out.
      if (current.expiryTimer !== undefined) clearTimeout(current.expiryTimer);
      current.expiryTimer = setTimeout(
        () => {
          this.lost(
            current,
            new LockLostError(`Lock "${spec.name}" expired: its leaseTime of ${spec.leaseTime} ms ran out`),
          );
        },
        Math.max(0, acquiredAt + spec.leaseTime - Date.now()),
      );
      current.expiryTimer.unref();
    }
    listening('acquire')?.publish({ name: spec.name, key: spec.key, owner: spec.field, holds: current.count });
    return current;
  }

  /** Records a release: `left` holds remain in Redis (0: fully released). */
  released(key: string, field: string, left: number): void {
    const hold = this.get(key, field);
    if (!hold) return;
    listening('release')?.publish({ name: hold.spec.name, key, owner: field, holds: left });
    hold.count = left;
    if (left <= 0) this.drop(hold);
  }

  /** Forgets a hold without marking it lost (unlock failed, or fully released). */
  drop(hold: Hold): void {
    hold.stop(this.watchdog);
    const { key, field } = hold.spec;
    const held = this.#holds.get(key);
    if (held === hold) {
      this.#holds.delete(key);
    } else if (held instanceof Map && held.get(field) === hold) {
      held.delete(field);
      if (held.size === 0) this.#holds.delete(key);
    }
  }

  #add(hold: Hold): void {
    const { key, field } = hold.spec;
    const held = this.#holds.get(key);
    if (held === undefined) {
      this.#holds.set(key, hold);
    } else if (held instanceof Hold) {
      this.#holds.set(
        key,
        new Map([
          [held.spec.field, held],
          [field, hold],
        ]),
      );
    } else {
      held.set(field, hold);
    }
  }

  /** Marks a hold lost: its signal aborts with `error` and the client emits `lockLost`. */
  lost(hold: Hold, error: LockLostError, announce = true): void {
    this.drop(hold);
    if (!hold.markLost(error)) return;
    if (!announce) return;
    listening('lost')?.publish({
      name: hold.spec.name,
      key: hold.spec.key,
      owner: hold.spec.field,
      reason: error.message,
    });
    this.onLost(hold.spec.name, error);
  }

  /**
   * Client shutdown: renewal stops and every hold's signal aborts (its holder can no longer count on
   * it), without `lockLost` events; Redis keeps the keys until their leases run out.
   */
  abandonAll(error: LockLostError): void {
    const all = [...this.#holds.values()].flatMap((held) => (held instanceof Hold ? [held] : [...held.values()]));
    for (const hold of all) this.lost(hold, error, false);
  }

  /** Holds recorded (for tests and inspection). */
  get size(): number {
    let size = 0;
    for (const held of this.#holds.values()) size += held instanceof Hold ? 1 : held.size;
    return size;
  }
}
