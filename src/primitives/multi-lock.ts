import type { ClientContext } from '../context.js';
import { listening } from '../diagnostics.js';
import {
  attemptAll,
  describeFailures,
  forceUnlockMembers,
  releaseMembers,
  type Member,
  type TakenMember,
} from '../engine/quorum.js';
import * as rules from '../engine/quorum-rules.js';
import { LateMembers } from '../engine/late-members.js';
import { Hold } from '../engine/holds.js';
import type { LockStatus } from '../engine/lock-backend.js';
import { LockAcquireTimeoutError, LockNotHeldError, MemberReleaseError } from '../errors.js';
import { Lease } from '../lease.js';
import type { Lock, LockLease } from '../lock.js';
import type { LockOptions, TryLockOptions } from '../options.js';
import { currentScopeOwner, randomId, runAsOwner } from '../owner.js';
import { checkFunction } from '../validate.js';

/** `MultiLock`: every member; `RedLock`: a majority. */
export type MultiLockKind = 'MultiLock' | 'RedLock';

/** One owner's hold on the group. Re-entry only counts up locally: the members are already held. */
interface Held {
  count: number;
  readonly hold: Hold;
  /** Grows when members that answered after the quorum join (see LateMembers). */
  readonly taken: TakenMember[];
  readonly dispose: () => void;
}

/**
 * A lock over several member locks, each possibly on its own independent Redis server (Redisson's
 * RedissonMultiLock / RedissonRedLock). MultiLock needs every member; RedLock a majority. Members
 * of one attempt are taken in parallel; an attempt that fails releases everything it took.
 */
export class MultiLock implements Lock {
  readonly name: string;
  /** Marks a group, which cannot be a member of another. */
  readonly [rules.GROUP] = true;
  readonly #ownId = randomId(12);
  readonly #held = new Map<string, Held>();
  readonly #failureLimit: number;
  readonly #need: number;

  constructor(
    private readonly ctx: ClientContext,
    private readonly members: readonly Member[],
    readonly kind: MultiLockKind,
  ) {
    const n = members.length;
    this.#failureLimit = kind === 'RedLock' ? n - (Math.floor(n / 2) + 1) : 0;
    this.#need = n - this.#failureLimit;
    this.name = `${kind}(${members.map((m) => m.backend.name).join(', ')})`;
  }

  async lock(options?: LockOptions): Promise<void> {
    await this.#acquireUntilDone(this.#ownerId(), rules.parseOptions(options, false));
  }

  async tryLock(options?: TryLockOptions): Promise<boolean> {
    const parsed = rules.parseOptions(options, true);
    return (await this.#acquire(this.#ownerId(), { ...parsed, waitTime: parsed.waitTime ?? 0 })) !== undefined;
  }

  async unlock(): Promise<void> {
    this.ctx.assertOpen();
    await this.#release(this.#ownerId());
  }

  /** Deletes every member whoever holds it; true when at least one was locked. */
  async forceUnlock(): Promise<boolean> {
    this.ctx.assertOpen();
    return forceUnlockMembers(this.members, this.name);
  }

  /** True when the quorum (all members, or a majority for RedLock) is locked, by anyone. */
  async isLocked(): Promise<boolean> {
    return (await this.#quorumStatus()).locked;
  }

  async isHeldByCurrentOwner(): Promise<boolean> {
    return (await this.#quorumStatus()).holds > 0;
  }

  async getHoldCount(): Promise<number> {
    const { holds } = await this.#quorumStatus();
    return holds > 0 ? (this.#held.get(this.#ownerId())?.count ?? holds) : 0;
  }

  /** The TTL the quorum of members still has: the lowest among all (MultiLock) or among the best majority. */
  async remainTimeToLive(): Promise<number> {
    return (await this.#quorumStatus()).ttl;
  }

  async withLock<T>(fn: (signal: AbortSignal) => T | Promise<T>, options?: TryLockOptions): Promise<T> {
    checkFunction(fn, 'fn');
    const parsed = rules.parseOptions(options, true);
    const ownerId = this.#ownerId();
    return runAsOwner(ownerId, async () => {
      const held = await this.#acquireOrTimeout(ownerId, parsed);
      let result: T;
      try {
        result = await fn(held.hold.signal);
      } catch (error) {
        await this.#release(ownerId).catch(() => undefined);
        throw error;
      }
      await this.#release(ownerId);
      return result;
    });
  }

  async acquire(options?: TryLockOptions): Promise<LockLease> {
    const ownerId = this.#ownerId();
    const held = await this.#acquireOrTimeout(ownerId, rules.parseOptions(options, true));
    return new Lease(held.hold.signal, () => this.#release(ownerId));
  }

  #ownerId(): string {
    return currentScopeOwner() ?? this.#ownId;
  }

  async #acquireOrTimeout(ownerId: string, parsed: rules.Parsed): Promise<Held> {
    const held = await (parsed.waitTime === undefined
      ? this.#acquireUntilDone(ownerId, parsed)
      : this.#acquire(ownerId, { ...parsed, waitTime: parsed.waitTime }));
    if (!held)
      throw new LockAcquireTimeoutError(`Could not acquire ${this.name} within waitTime ${parsed.waitTime} ms`);
    return held;
  }

  async #acquireUntilDone(ownerId: string, parsed: rules.Parsed): Promise<Held> {
    for (;;) {
      const held = await this.#acquire(ownerId, {
        ...parsed,
        waitTime: rules.attemptWait(this.members.length, parsed.leaseTime),
      });
      if (held) return held;
    }
  }

  /**
   * The seeds' tryLock(waitTime, leaseTime): attempts until one takes the quorum or the time is
   * up. A busy member is waited for at most its share of the remaining time, recomputed for each
   * attempt. Throws QuorumError when more members were unreachable than the failure limit allows.
   */
  async #acquire(ownerId: string, p: rules.Parsed & { waitTime: number }): Promise<Held | undefined> {
    this.ctx.assertOpen();
    p.signal?.throwIfAborted();
    const existing = this.#held.get(ownerId);
    if (existing && !existing.hold.isLost) {
      existing.count++;
      return existing;
    }
    if (existing) {
      // Lost and never unlocked: give back what is left of it, or this attempt would re-enter it.
      this.#held.delete(ownerId);
      existing.dispose();
      await releaseMembers(existing.taken);
    }
    const deadline = Date.now() + p.waitTime;
    // While acquiring, a lease long enough that early members outlive the wait for later ones.
    // (Whole milliseconds: PEXPIRE takes integers.)
    const memberLease =
      p.leaseTime === undefined ? undefined : Math.ceil(p.waitTime > 0 ? 2 * p.waitTime : p.leaseTime);
    for (;;) {
      const remaining = deadline - Date.now();
      const memberWait = p.waitTime === 0 ? 0 : Math.max(1, remaining / this.members.length);
      const started = Date.now();
      // Late members may join when they already carry the hold's own lease (or their watchdog's).
      const late = this.#failureLimit > 0 && memberLease === p.leaseTime ? new LateMembers() : undefined;
      const { taken, failures } = await attemptAll(this.members, {
        ownerId,
        memberWait,
        memberLease,
        failureLimit: this.#failureLimit,
        signal: p.signal,
        adopt: late?.offer,
      });
      const validity =
        failures.length > this.#failureLimit
          ? undefined
          : await rules.confirmQuorum(taken, failures, this.#need, p.leaseTime, memberLease, started);
      const held = validity === undefined ? undefined : this.#record(ownerId, taken, validity, late);
      if (!held) await releaseMembers([...taken, ...(late?.close() ?? [])]);
      if (p.signal?.aborted) {
        if (held) await this.#release(ownerId).catch(() => undefined);
        throw p.signal.reason;
      }
      if (held) return held;
      const unreachable = failures.filter((f) => f.reason !== 'busy');
      if (unreachable.length > this.#failureLimit)
        throw rules.quorumError(this.name, this.#need, this.members.length, failures);
      if (p.waitTime === 0 || Date.now() >= deadline) return undefined;
      // A short random pause: rivals that failed together do not retry in lockstep.
      await rules.pause(Math.min(Math.random() * 50, Math.max(0, deadline - Date.now())), p.signal);
    }
  }

  #record(ownerId: string, taken: TakenMember[], validity: number, late: LateMembers | undefined): Held {
    const hold = new Hold({
      name: this.name,
      key: `${this.kind}:${this.#ownId}`,
      field: ownerId,
      script: this.members[0]!.backend.renewScript,
      leaseTime: Number.isFinite(validity) ? validity : undefined,
    });
    hold.count = 1;
    const dispose = rules.watchGroup(taken, late, this.#need, validity, this.name, (error) => {
      // As for a single lock, a lost lock is no longer renewed: what is left of it expires.
      for (const member of taken) member.stopRenewal();
      this.ctx.holds.lost(hold, error);
    });
    const held: Held = { count: 1, hold, taken, dispose };
    this.#held.set(ownerId, held);
    listening('acquire')?.publish({
      name: this.name,
      key: hold.spec.key,
      owner: ownerId,
      holds: 1,
      members: taken.length,
    });
    return held;
  }

  /** Releases one hold; the last one releases every member in parallel and waits for all. */
  async #release(ownerId: string): Promise<void> {
    const held = this.#held.get(ownerId);
    if (!held)
      throw new LockNotHeldError(`Cannot unlock ${this.name}: it is not held by owner ${this.ctx.clientId}:${ownerId}`);
    if (--held.count > 0) return;
    this.#held.delete(ownerId);
    held.dispose();
    held.hold.stop(this.ctx.watchdog);
    const failures = await releaseMembers(held.taken);
    listening('release')?.publish({
      name: this.name,
      key: held.hold.spec.key,
      owner: ownerId,
      holds: 0,
      failures: failures.length,
    });
    if (failures.length === 0) return;
    if (failures.length === held.taken.length && failures.every((f) => f.reason === 'not-held')) {
      throw new LockNotHeldError(`Cannot unlock ${this.name}: no member is held any more (their lease ran out)`);
    }
    throw new MemberReleaseError(`Released ${this.name} except: ${describeFailures(failures)}`, failures);
  }

  /** The status the quorum shares (see quorumStatus). */
  async #quorumStatus(): Promise<LockStatus> {
    this.ctx.assertOpen();
    return rules.quorumStatus(this.members, this.#ownerId(), this.#failureLimit, this.name);
  }
}

/** Creates the lock returned by `LockClient.getMultiLock()` / `getRedLock()`. */
export function createMultiLock(ctx: ClientContext, locks: readonly unknown[], kind: MultiLockKind): Lock {
  return new MultiLock(ctx, rules.toMembers(locks), kind);
}
