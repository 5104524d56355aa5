/**
 * Holds of a lock kept under one key (Lock, FairLock, SpinLock, FencedLock, either side of a
 * ReadWriteLock): owners, re-entry counts, renewal, release, and outcomes that stay unknown.
 */
import { now } from '../clock.js';
import type { ClientContext } from '../context.js';
import { listening, type LockKind } from '../diagnostics.js';
import { LockNotHeldError, RedisUnavailableError } from '../errors.js';
import { withTimeout } from '../redis/script-runner.js';
import { acquire } from './acquire.js';
import type { AcquireRequest, Grant, HeldLock, Hold, LockBackend, LockStatus, MemberCore } from './lock-core.js';
import { provenUntil, type Liveness } from './liveness.js';

/**
 * A lock kept under one Redis key (Lock, FairLock, SpinLock, FencedLock, either side of a
 * ReadWriteLock): the owners' holds of this client, their re-entry counts, their Liveness and
 * renewal. The calls of one owner on one key run one after the other, so that the count each
 * call names is exact.
 */
export class KeyLock implements MemberCore {
  readonly identities: readonly string[];

  constructor(
    private readonly ctx: ClientContext,
    readonly backend: LockBackend,
  ) {
    this.identities = [backend.identity];
  }

  get name(): string {
    return this.backend.name;
  }

  get kind(): LockKind {
    return this.backend.kind;
  }

  /** The Redis owner of `ownerId` and its key in `ctx.holds`. */
  #who(ownerId: string): { owner: string; holdKey: string } {
    const owner = `${this.ctx.clientId}:${ownerId}`;
    return { owner, holdKey: `${this.backend.key}\n${owner}` };
  }

  #hold(ownerId: string): Hold | undefined {
    return this.ctx.holds.get(this.#who(ownerId).holdKey);
  }

  // Every method here that returns a promise rejects rather than throws (a closed client, say), so
  // that a caller's .catch() (a MultiLock giving back a member granted late) hears it.
  acquire(ownerId: string, request: AcquireRequest, shared = true): Promise<HeldLock | undefined> {
    const closed = this.#closed();
    if (closed) return closed;
    const { owner, holdKey } = this.#who(ownerId);
    // A new owner's hold is this call's alone (the usual case): nothing to re-enter, nobody to wait for.
    if (!shared) return this.#acquireFresh(owner, holdKey, request);
    return this.ctx.serially(holdKey, () => {
      const held = this.ctx.holds.get(holdKey);
      const result = held ? this.#reenter(held, request) : this.#acquireFresh(owner, holdKey, request);
      return { result, settled: result };
    });
  }

  /** A rejection when the client was shut down. */
  #closed(): Promise<never> | undefined {
    try {
      this.ctx.assertOpen();
      return undefined;
    } catch (error) {
      return Promise.reject(error);
    }
  }

  #acquireFresh(owner: string, holdKey: string, request: AcquireRequest): Promise<HeldLock | undefined> {
    const leaseMs = request.leaseTime ?? watchdogLease(this.ctx);
    // Read for the acquire diagnostics only (see #held).
    const started = listening('acquire') ? now() : 0;
    return acquire(this.backend.begin(owner, leaseMs), this.ctx, request).then((grant) =>
      grant ? this.#held(owner, holdKey, request, leaseMs, grant, started) : undefined,
    );
  }

  /** Records the hold a grant made: its Liveness, its renewal, its loss detection. */
  #held(
    owner: string,
    holdKey: string,
    request: AcquireRequest,
    leaseMs: number,
    grant: Grant,
    started: number,
  ): HeldLock {
    const { name, kind, key } = this.backend;
    const liveness = this.ctx.livenesses.create(
      { name, kind, key, owner },
      grant.validUntil,
      request.leaseTime === undefined
        ? 'renewal could not prove it held before its lease ran out'
        : `its leaseTime of ${request.leaseTime} ms ran out`,
      !request.member,
    );
    const hold: Hold = {
      count: 1,
      owner,
      id: String(++holdsMade),
      holdKey,
      liveness,
      token: grant.token,
      since: grant.since,
      leaseMs,
      // Without leaseTime the watchdog renews the hold (up to maxLeaseTime). With one it expires by
      // itself, unless the grant proved less (a hand-over's short reservation): then the watchdog
      // extends it to the lease's end.
      renewal: this.ctx.watchdog.add(
        liveness,
        { script: this.backend.renewScript, key, owner },
        grant.since,
        grant.since + (request.leaseTime ?? this.ctx.options.maxLeaseTime ?? Infinity),
      ),
      unwatch: this.ctx.loss.watch(liveness, { script: this.backend.checkScript, key, owner }),
    };
    this.ctx.holds.set(holdKey, hold);
    // The clock is read for diagnostics only while someone listens: every lock() pays for each read.
    const diagnostics = listening('acquire');
    if (diagnostics) {
      const waited = started === 0 ? 0 : now() - started;
      diagnostics.publish({ name, kind, key, owner, holds: 1, waited, byMessage: grant.byMessage === true });
    }
    return { liveness, token: grant.token };
  }

  /**
   * One more hold for an owner that holds the lock. If its hold turns out lost (forced open,
   * expired), the loss is reported to the holder (its signal aborts) and this call acquires anew,
   * as any acquisition of a free lock would.
   */
  async #reenter(hold: Hold, request: AcquireRequest): Promise<HeldLock | undefined> {
    const { owner, holdKey } = hold;
    if (!hold.liveness.alive) {
      this.#forget(hold);
      return this.#acquireFresh(owner, holdKey, request);
    }
    const leaseMs = request.leaseTime ?? watchdogLease(this.ctx);
    const until = now() + this.ctx.options.commandTimeout;
    let grant: Grant | null;
    try {
      grant = await this.backend.reenter(owner, hold.count, leaseMs, until);
    } catch (error) {
      // Unknown whether it counted: make sure it did not, since the caller hears it failed.
      if (error instanceof RedisUnavailableError) this.#settleInBackground(hold, hold.count + 1);
      throw error;
    }
    if (grant === null) {
      hold.liveness.lose('it was gone when this owner entered it again');
      this.#forget(hold);
      return this.#acquireFresh(owner, holdKey, request);
    }
    hold.count++;
    hold.liveness.confirm(grant.validUntil);
    const { name, kind, key } = this.backend;
    listening('acquire')?.publish({ name, kind, key, owner, holds: hold.count, waited: 0 });
    return { liveness: hold.liveness, token: hold.token };
  }

  release(ownerId: string, shared = true): Promise<number> {
    const closed = this.#closed();
    if (closed) return closed;
    const { owner, holdKey } = this.#who(ownerId);
    if (!shared) {
      const hold = this.ctx.holds.get(holdKey);
      // A new owner's acquisition holds the lock once: this is its last release.
      return hold ? this.#release(hold) : Promise.reject(this.#notHeld(owner));
    }
    return this.ctx.serially(holdKey, () => {
      const hold = this.ctx.holds.get(holdKey);
      if (!hold) {
        const refused = Promise.reject(this.#notHeld(owner));
        return { result: refused, settled: refused };
      }
      const final = hold.count === 1;
      const settled = this.#release(hold);
      // A last release is bounded by commandTimeout already (see #release); one that leaves holds
      // goes on longer, while the caller hears after commandTimeout.
      const limit = this.ctx.options.commandTimeout;
      const result = final ? settled : withTimeout(settled, limit, () => unknownRelease(this.name, limit));
      return { result, settled: settled.catch(() => undefined) };
    });
  }

  /**
   * Gives one hold back. The last one stops loss detection first (racing the release, it would
   * report the lock lost), and keeps renewing it, without taking "gone" for a loss, until the
   * release lands: a release that waits out a failover or a slot migration must not let the lease
   * run out meanwhile. A release whose reply was lost is sent again until its outcome is known:
   * the caller may hear RedisUnavailableError after commandTimeout, but the release goes on, so
   * the lock is handed over as soon as Redis answers.
   */
  #release(hold: Hold): Promise<number> {
    const { owner } = hold;
    const lost = hold.liveness.lostError;
    if (lost) {
      this.#forget(hold);
      // Lost as far as this process can prove; should Redis still hold it, let it go at once.
      const until = now() + this.ctx.options.commandTimeout;
      this.backend.release(owner, hold.id, hold.count, until).catch(() => undefined);
      return Promise.reject(lost);
    }
    const final = hold.count === 1;
    if (final) this.#releasing(hold);
    // A last release is retried for commandTimeout, then the lock is left to its lease; one that
    // leaves holds is retried while they are proven (renewal goes on meanwhile).
    const time = now();
    const soon = time + this.ctx.options.commandTimeout;
    const until = final ? soon : Math.max(hold.liveness.validUntil, soon);
    const lease = { at: time, left: hold.liveness.validUntil - time, max: hold.leaseMs };
    return this.backend.release(owner, hold.id, hold.count, until, lease).then(
      (left) => this.#released(hold, left),
      (error: unknown) => {
        // Never learned. A last hold expires with its lease (nobody renews it now); one that leaves
        // holds behind cannot be counted on any more.
        if (final) hold.liveness.end();
        else hold.liveness.lose('a release of one of its holds could not be confirmed', error);
        this.#forget(hold);
        throw error;
      },
    );
  }

  /** What Redis answered a release: `left` holds (-1: it held none). */
  #released(hold: Hold, left: number): number {
    if (left < 0) {
      hold.liveness.lose('it was no longer held when released');
      this.#forget(hold);
      throw hold.liveness.lostError;
    }
    hold.count = left;
    const { name, kind, key } = this.backend;
    const diagnostics = listening('release');
    if (diagnostics) {
      const held = left === 0 ? now() - hold.since : undefined;
      diagnostics.publish({ name, kind, key, owner: hold.owner, holds: left, held });
    }
    if (left === 0) {
      hold.liveness.end();
      this.#forget(hold);
    }
    return left;
  }

  /** Brings the owner's count in Redis back to `holds - 1` after a re-entry whose outcome was lost. */
  #settleInBackground(hold: Hold, holds: number): void {
    void this.ctx.serially(hold.holdKey, () => {
      const until = Math.max(hold.liveness.validUntil, now() + this.ctx.options.commandTimeout);
      const settled = this.backend
        .release(hold.owner, hold.id, holds, until)
        .catch((error: unknown) => hold.liveness.lose('its hold count could not be confirmed', error));
      return { result: settled, settled };
    });
  }

  /** Its last release is on its way: no loss detection, renewal until the release settles (see #release). */
  #releasing(hold: Hold): void {
    hold.unwatch?.();
    hold.unwatch = undefined;
    if (hold.renewal) hold.renewal.releasing = true;
  }

  /** Nothing renews or watches the hold any more. */
  #stopKeeping(hold: Hold): void {
    if (hold.renewal) this.ctx.watchdog.remove(hold.renewal);
    hold.renewal = undefined;
    hold.unwatch?.();
    hold.unwatch = undefined;
  }

  #forget(hold: Hold): void {
    this.#stopKeeping(hold);
    if (this.ctx.holds.get(hold.holdKey) === hold) this.ctx.holds.delete(hold.holdKey);
  }

  #notHeld(owner: string): LockNotHeldError {
    return new LockNotHeldError(`Cannot unlock "${this.name}": it is not held by owner ${owner}`);
  }

  /** Sets the lease of `ownerId`'s hold to `leaseMs` from now (MultiLock's last step); false when not held. */
  async setLease(ownerId: string, leaseMs: number): Promise<boolean> {
    const hold = this.#hold(ownerId);
    if (!hold?.liveness.alive) return false;
    const sentAt = now();
    const { key, renewScript } = this.backend;
    const reply = await this.ctx.run(renewScript, [key], [key, hold.owner, leaseMs]);
    if (!Array.isArray(reply) || reply[0] !== 1) return false;
    hold.liveness.reprove(provenUntil(sentAt, leaseMs));
    return true;
  }

  stopRenewing(ownerId: string): void {
    const hold = this.#hold(ownerId);
    if (hold) this.#stopKeeping(hold);
  }

  /** The Liveness of `ownerId`'s hold (MultiLock follows its members). */
  livenessOf(ownerId: string): Liveness | undefined {
    return this.#hold(ownerId)?.liveness;
  }

  async forceUnlock(): Promise<boolean> {
    this.ctx.assertOpen();
    return this.backend.forceUnlock();
  }

  async status(ownerId: string): Promise<LockStatus> {
    this.ctx.assertOpen();
    return this.backend.status(this.#who(ownerId).owner);
  }
}

/** Hold ids: unique in the process, and owners (with their client id) are unique across processes. */
let holdsMade = 0;

/** The lease of a lock the watchdog keeps: watchdogTimeout, but no longer than maxLeaseTime. */
export function watchdogLease(ctx: ClientContext): number {
  const { watchdogTimeout, maxLeaseTime } = ctx.options;
  return maxLeaseTime === undefined ? watchdogTimeout : Math.min(watchdogTimeout, maxLeaseTime);
}

function unknownRelease(name: string, ms: number): RedisUnavailableError {
  return new RedisUnavailableError(
    `Redis did not confirm the release of "${name}" within ${ms} ms; it is still being retried`,
    { outcomeUnknown: true },
  );
}
