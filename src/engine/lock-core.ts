/**
 * The interfaces between the Lock API and the locks behind it: LockCore, LockBackend, Grant, Hold.
 */
import type { LockKind } from '../diagnostics.js';
import type { LuaScript } from '../redis/connection.js';
import type { Acquisition } from './acquire.js';
import type { Liveness } from './liveness.js';
import type { Renewal } from './watchdog.js';

/** A lock's state as one read returns it. */
export interface LockStatus {
  readonly locked: boolean;
  /** The asking owner's hold count (0 when it holds none). */
  readonly holds: number;
  /** ms; -2: no such lock, -1: no expiry. */
  readonly ttl: number;
}

/** One acquisition's request, validated. */
export interface AcquireRequest {
  /** Left out: the watchdog keeps the lock alive. */
  readonly leaseTime?: number;
  /** Epoch ms after which the wait gives up; undefined: until acquired; `now()` (clock.ts): one attempt. */
  readonly deadline?: number;
  readonly signal?: AbortSignal;
  /** Taken as a MultiLock / RedLock member: its loss is the group's business, not a `lockLost` of its own. */
  readonly member?: boolean;
}

/** What an acquisition gives its caller. */
export interface HeldLock {
  /** The hold's Liveness: its `signal` aborts with LockLostError once the hold is known lost. */
  readonly liveness: Liveness;
  /** The fencing token, for locks that issue one. */
  readonly token?: bigint;
}

/**
 * What the Lock API (LockHandle) needs of a lock: single-key locks (KeyLock) and MultiLock /
 * RedLock provide it. Owners are given as owner ids; the core makes them Redis owners.
 */
export interface LockCore {
  readonly name: string;
  readonly kind: LockKind;
  /** An acquisition by owner X makes these re-enter for X inside the holder's callback. */
  readonly identities: readonly string[];
  /**
   * Acquires for `ownerId` (re-enters when it holds the lock); undefined when the deadline passed
   * first. `shared`: other calls may use this owner at the same time (a scope's, a holder
   * callback's), so calls of this owner must wait for each other; a new owner of one call is not.
   */
  acquire(ownerId: string, request: AcquireRequest, shared?: boolean): Promise<HeldLock | undefined>;
  /**
   * Releases one hold of `ownerId` (`shared` as for acquire); resolves with the holds left.
   * LockNotHeldError when it holds none, LockLostError when it was lost.
   */
  release(ownerId: string, shared?: boolean): Promise<number>;
  forceUnlock(): Promise<boolean>;
  status(ownerId: string): Promise<LockStatus>;
}

/** A lock that can be a MultiLock / RedLock member: a single-key lock (KeyLock). */
export interface MemberCore extends LockCore {
  /** The Liveness of `ownerId`'s hold, while it has one. */
  livenessOf(ownerId: string): Liveness | undefined;
  /** Sets the lease of `ownerId`'s hold to `leaseMs` from now; false when it holds none. */
  setLease(ownerId: string, leaseMs: number): Promise<boolean>;
  /** Stops renewing `ownerId`'s hold (its group was lost): what is left of it expires with its lease. */
  stopRenewing(ownerId: string): void;
}

/** One owner's holds on one key (KeyLock's record, in `ClientContext.holds`). */
export interface Hold {
  count: number;
  readonly owner: string;
  /** Names this hold among the owner's (a scope's owner holds a lock many times over): see LockBackend.release. */
  readonly id: string;
  /** Its entry in `ctx.holds`. */
  readonly holdKey: string;
  readonly liveness: Liveness;
  readonly token: bigint | undefined;
  /** When it was granted (local clock), for the hold time reported at the last release. */
  readonly since: number;
  /** The longest lease it is ever given, in ms (its leaseTime, or the watchdog's). */
  readonly leaseMs: number;
  /** Its place in the watchdog, while renewed. */
  renewal: Renewal | undefined;
  /** Stops server-pushed loss detection of it, while watched. */
  unwatch: (() => void) | undefined;
}

/** What an acquisition was granted: from when (local time before the grant) and until when it is proven. */
export interface Grant {
  readonly since: number;
  readonly validUntil: number;
  readonly token?: bigint;
  /** Taken from a hand-over message with no round trip (for diagnostics). */
  readonly byMessage?: boolean;
}

/**
 * What one kind of single-key lock does in Redis: its keys and scripts. KeyLock adds everything
 * else (owners' holds, the wait, renewal, loss), so each kind writes only what differs.
 * Every call here must be safe to repeat (a reply lost and the call sent again gives the first
 * run's outcome): re-entry and release say how many holds the owner has, so a repeat is seen.
 */
export interface LockBackend {
  readonly name: string;
  readonly kind: LockKind;
  /** The key holds are recorded, renewed and reported under. */
  readonly key: string;
  /** Re-entry inside a holder's callback is by these (a read-write lock's two sides share one). */
  readonly identity: string;
  /** Batch renewal script (see RenewalTarget). */
  readonly renewScript: LuaScript;
  /** Batch read-only check that each owner still holds its key (see LossCheck). */
  readonly checkScript: LuaScript;
  /** One acquisition for `owner`, who holds nothing. */
  begin(owner: string, leaseMs: number): Acquisition<Grant>;
  /** `owner` holds `holds`: take one more and set the lease; null when it holds none any more. */
  reenter(owner: string, holds: number, leaseMs: number, until: number): Promise<Grant | null>;
  /**
   * `owner` holds `holds` under hold `holdId`: give one back; the holds left, or -1 when it holds
   * none. A repeat after the last one answers 0 only for the same hold. Repeats are sent until
   * `until`; `lease` bounds what is left of the lock's lease in Redis (at least `left`, at most
   * `max` ms), for a marker that may keep it.
   */
  release(
    owner: string,
    holdId: string,
    holds: number,
    until: number,
    lease?: { readonly left: number; readonly max: number },
  ): Promise<number>;
  forceUnlock(): Promise<boolean>;
  status(owner: string): Promise<LockStatus>;
}
