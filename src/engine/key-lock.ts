import type { ClientContext } from '../context.js';
import { listening, type LockKind } from '../diagnostics.js';
import { LockNotHeldError, RedisUnavailableError } from '../errors.js';
import { withTimeout } from '../redis/script-runner.js';
import { acquire } from './acquire.js';
import type { AcquireRequest, Grant, HeldLock, LockBackend, LockStatus, MemberCore } from './lock-core.js';
import { provenUntil, type Liveness } from './liveness.js';

/** One owner's holds on one key. */
export interface Hold {
  count: number;
  readonly liveness: Liveness;
  readonly token: bigint | undefined;
  /** When it was granted (local clock), for the hold time reported at the last release. */
  readonly since: number;
  /** Stops the watchdog renewing it (a no-op when nothing renews it). */
  stopRenewal: () => void;
}

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

  #owner(ownerId: string): string {
    return `${this.ctx.clientId}:${ownerId}`;
  }

  #holdKey(owner: string): string {
    return `${this.backend.key}\n${owner}`;
  }

  holdCount(ownerId: string): number {
    return this.ctx.holds.get(this.#holdKey(this.#owner(ownerId)))?.count ?? 0;
  }

  acquire(ownerId: string, request: AcquireRequest): Promise<HeldLock | undefined> {
    this.ctx.assertOpen();
    const owner = this.#owner(ownerId);
    return this.ctx.serially(this.#holdKey(owner), () => {
      const held = this.ctx.holds.get(this.#holdKey(owner));
      const result = held ? this.#reenter(owner, held, request) : this.#acquireFresh(owner, request);
      return { result, settled: result };
    });
  }

  async #acquireFresh(owner: string, request: AcquireRequest): Promise<HeldLock | undefined> {
    const leaseMs = request.leaseTime ?? watchdogLease(this.ctx);
    const started = Date.now();
    const grant = await acquire(this.backend.begin(owner, leaseMs), this.ctx, request);
    if (!grant) return undefined;
    const liveness = this.ctx.livenesses.create(
      { name: this.name, kind: this.kind, key: this.backend.key, owner },
      grant.validUntil,
      request.leaseTime === undefined
        ? 'renewal could not prove it held before its lease ran out'
        : `its leaseTime of ${request.leaseTime} ms ran out`,
      !request.member,
    );
    const hold: Hold = { count: 1, liveness, token: grant.token, since: grant.since, stopRenewal: () => undefined };
    this.ctx.holds.set(this.#holdKey(owner), hold);
    this.#renew(hold, owner, grant, request.leaseTime);
    const { name, kind, key } = this.backend;
    const waited = Date.now() - started;
    listening('acquire')?.publish({ name, kind, key, owner, holds: 1, waited, byMessage: grant.byMessage === true });
    return { signal: liveness.signal, token: grant.token };
  }

  /**
   * Without leaseTime the watchdog renews the hold (up to maxLeaseTime). With one it expires by
   * itself, unless the grant proved less than the lease (a hand-over's short reservation): then
   * the watchdog extends it to the lease's end.
   */
  #renew(hold: Hold, owner: string, grant: Grant, leaseTime: number | undefined): void {
    const { maxLeaseTime } = this.ctx.options;
    const renewUntil =
      leaseTime !== undefined
        ? grant.since + leaseTime
        : maxLeaseTime === undefined
          ? Infinity
          : grant.since + maxLeaseTime;
    if (grant.validUntil >= provenUntil(renewUntil, 0)) return;
    const target = { script: this.backend.renewScript, key: this.backend.key, owner };
    hold.stopRenewal = this.ctx.watchdog.add(hold.liveness, target, renewUntil);
  }

  /**
   * One more hold for an owner that holds the lock. If its hold turns out lost (forced open,
   * expired), the loss is reported to the holder (its signal aborts) and this call acquires anew,
   * as any acquisition of a free lock would.
   */
  async #reenter(owner: string, hold: Hold, request: AcquireRequest): Promise<HeldLock | undefined> {
    if (!hold.liveness.alive) {
      this.#forget(owner, hold);
      return this.#acquireFresh(owner, request);
    }
    const leaseMs = request.leaseTime ?? watchdogLease(this.ctx);
    const until = Date.now() + this.ctx.options.commandTimeout;
    let grant: Grant | null;
    try {
      grant = await this.backend.reenter(owner, hold.count, leaseMs, until);
    } catch (error) {
      // Unknown whether it counted: make sure it did not, since the caller hears it failed.
      if (error instanceof RedisUnavailableError) this.#settleInBackground(owner, hold, hold.count + 1);
      throw error;
    }
    if (grant === null) {
      hold.liveness.lose('it was gone when this owner entered it again');
      this.#forget(owner, hold);
      return this.#acquireFresh(owner, request);
    }
    hold.count++;
    hold.liveness.confirm(grant.validUntil);
    const { name, kind, key } = this.backend;
    listening('acquire')?.publish({ name, kind, key, owner, holds: hold.count, waited: 0 });
    return { signal: hold.liveness.signal, token: hold.token };
  }

  release(ownerId: string): Promise<void> {
    this.ctx.assertOpen();
    const owner = this.#owner(ownerId);
    return this.ctx.serially(this.#holdKey(owner), () => {
      const hold = this.ctx.holds.get(this.#holdKey(owner));
      if (!hold) {
        const result = Promise.reject(this.#notHeld(owner));
        return { result, settled: Promise.resolve() };
      }
      const settled = this.#release(owner, hold);
      const limit = this.ctx.options.commandTimeout;
      const result = withTimeout(settled, limit, () => unknownRelease(this.name, limit));
      return { result, settled: settled.catch(() => undefined) };
    });
  }

  /**
   * Gives one hold back. The last one stops renewal first (renewal racing the release must not
   * report it lost). A release whose reply was lost is sent again until its outcome is known or
   * the hold's proven time ends: the caller may hear RedisUnavailableError after commandTimeout,
   * but the release goes on, so the lock is handed over as soon as Redis answers.
   */
  async #release(owner: string, hold: Hold): Promise<void> {
    const lost = hold.liveness.lostError;
    if (lost) {
      this.#forget(owner, hold);
      // Lost as far as this process can prove; should Redis still hold it, let it go at once.
      const until = Date.now() + this.ctx.options.commandTimeout;
      this.backend.release(owner, hold.count, until).catch(() => undefined);
      throw lost;
    }
    const final = hold.count === 1;
    if (final) hold.stopRenewal();
    // A last release is retried for commandTimeout, then the lock is left to its lease; one that
    // leaves holds is retried while they are proven (renewal goes on meanwhile).
    const soon = Date.now() + this.ctx.options.commandTimeout;
    const until = final ? soon : Math.max(hold.liveness.validUntil, soon);
    let left: number;
    try {
      left = await this.backend.release(owner, hold.count, until);
    } catch (error) {
      if (final) {
        // Never learned: the lock expires with its lease; nobody renews it now.
        hold.liveness.end();
        this.#forget(owner, hold);
      } else {
        hold.liveness.lose('a release of one of its holds could not be confirmed', error);
        this.#forget(owner, hold);
      }
      throw error;
    }
    if (left < 0) {
      hold.liveness.lose('it was no longer held when released');
      this.#forget(owner, hold);
      throw hold.liveness.lostError;
    }
    hold.count = left;
    const { name, kind, key } = this.backend;
    const held = left === 0 ? Date.now() - hold.since : undefined;
    listening('release')?.publish({ name, kind, key, owner, holds: left, held });
    if (left === 0) {
      hold.liveness.end();
      this.#forget(owner, hold);
    }
  }

  /** Brings the owner's count in Redis back to `holds - 1` after a re-entry whose outcome was lost. */
  #settleInBackground(owner: string, hold: Hold, holds: number): void {
    void this.ctx.serially(this.#holdKey(owner), () => {
      const until = Math.max(hold.liveness.validUntil, Date.now() + this.ctx.options.commandTimeout);
      const settled = this.backend
        .release(owner, holds, until)
        .catch((error: unknown) => hold.liveness.lose('its hold count could not be confirmed', error));
      return { result: settled, settled };
    });
  }

  #forget(owner: string, hold: Hold): void {
    hold.stopRenewal();
    if (this.ctx.holds.get(this.#holdKey(owner)) === hold) this.ctx.holds.delete(this.#holdKey(owner));
  }

  #notHeld(owner: string): LockNotHeldError {
    return new LockNotHeldError(`Cannot unlock "${this.name}": it is not held by owner ${owner}`);
  }

  /** Sets the lease of `ownerId`'s hold to `leaseMs` from now (MultiLock's last step); false when not held. */
  async setLease(ownerId: string, leaseMs: number): Promise<boolean> {
    const owner = this.#owner(ownerId);
    const hold = this.ctx.holds.get(this.#holdKey(owner));
    if (!hold?.liveness.alive) return false;
    const sentAt = Date.now();
    const reply = await this.ctx.run(this.backend.renewScript, [this.backend.key], [owner, leaseMs]);
    if (!Array.isArray(reply) || reply[0] !== 1) return false;
    hold.liveness.reprove(provenUntil(sentAt, leaseMs));
    return true;
  }

  stopRenewing(ownerId: string): void {
    this.ctx.holds.get(this.#holdKey(this.#owner(ownerId)))?.stopRenewal();
  }

  /** The Liveness of `ownerId`'s hold (MultiLock follows its members). */
  livenessOf(ownerId: string): Liveness | undefined {
    return this.ctx.holds.get(this.#holdKey(this.#owner(ownerId)))?.liveness;
  }

  forceUnlock(): Promise<boolean> {
    this.ctx.assertOpen();
    return this.backend.forceUnlock();
  }

  status(ownerId: string): Promise<LockStatus> {
    this.ctx.assertOpen();
    return this.backend.status(this.#owner(ownerId));
  }
}

/** The lease of a lock the watchdog keeps: watchdogTimeout, but no longer than maxLeaseTime. */
export function watchdogLease(ctx: ClientContext): number {
  const { watchdogTimeout, maxLeaseTime } = ctx.options;
  return maxLeaseTime === undefined ? watchdogTimeout : Math.min(watchdogTimeout, maxLeaseTime);
}

function unknownRelease(name: string, ms: number): RedisUnavailableError {
  return new RedisUnavailableError(
    `Redis did not confirm the release of "${name}" within ${ms} ms; it is still being retried`,
  );
}
