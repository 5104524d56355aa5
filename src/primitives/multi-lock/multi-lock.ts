/**
 * MultiLock and RedLock: one lock over several member locks, each possibly on its own independent
 * Redis server; RedLock is the same algorithm with a failure limit (a majority is enough).
 */
import { now } from '../../clock.js';
import type { ClientContext } from '../../context.js';
import { listening } from '../../diagnostics.js';
import { fanOut } from '../../engine/fan-out.js';
import type { AcquireRequest, HeldLock, LockCore, LockStatus, MemberCore } from '../../engine/lock-core.js';
import { LockHandle } from '../../engine/lock-handle.js';
import { groupProvenUntil, type Liveness } from '../../engine/liveness.js';
import { sleep } from '../../engine/timers.js';
import { LockLostError, LockNotHeldError, MemberReleaseError, QuorumError, type MemberFailure } from '../../errors.js';
import type { Lock } from '../../lock.js';
import { randomId } from '../../owner.js';
import { attemptAll, attemptWait, setLeaseOrGiveBack } from './attempt.js';
import { holdGroup, LateMembers, type GroupHold } from './group-hold.js';
import { groups, toMembers } from './members.js';
import { describeFailures, quorumOf } from './quorum.js';

/** `MultiLock`: every member; `RedLock`: a majority. */
export type MultiLockKind = 'MultiLock' | 'RedLock';

/**
 * A lock over several member locks, each possibly on its own independent Redis server (Redisson's
 * RedissonMultiLock / RedissonRedLock): MultiLock needs every member, RedLock a majority (a
 * failure limit of a minority, not a second algorithm). Members of one attempt are taken in
 * parallel; an attempt that fails gives back everything it took. The group's Liveness follows
 * its members': it is proven as long as enough of them are, and lost when too few are left.
 */
class MultiLockCore implements LockCore {
  readonly identities: readonly string[];
  readonly name: string;
  readonly kind: 'multi-lock' | 'red-lock';
  readonly #held = new Map<string, GroupHold>();
  readonly #failureLimit: number;
  readonly #need: number;
  readonly #key = `group:${randomId(12)}`;

  constructor(
    private readonly ctx: ClientContext,
    private readonly members: readonly MemberCore[],
    kind: MultiLockKind,
  ) {
    const n = members.length;
    this.#failureLimit = kind === 'RedLock' ? n - (Math.floor(n / 2) + 1) : 0;
    this.#need = n - this.#failureLimit;
    this.kind = kind === 'RedLock' ? 'red-lock' : 'multi-lock';
    this.name = `${kind}(${members.map((m) => m.name).join(', ')})`;
    // Inside the group's callback its members re-enter too: they are held by the same owner.
    this.identities = [this.#key, ...members.flatMap((member) => member.identities)];
  }

  async acquire(ownerId: string, request: AcquireRequest, shared = true): Promise<HeldLock | undefined> {
    this.ctx.assertOpen();
    const existing = this.#held.get(ownerId);
    if (existing) {
      if (!existing.liveness.alive) throw existing.liveness.lostError;
      existing.count++;
      return { liveness: existing.liveness };
    }
    if (request.deadline !== undefined) return this.#acquireBy(ownerId, request.deadline, request, shared);
    for (;;) {
      const deadline = now() + attemptWait(this.members.length, request.leaseTime);
      const held = await this.#acquireBy(ownerId, deadline, request, shared);
      if (held) return held;
    }
  }

  /**
   * Attempts until one takes the quorum or `deadline` passes. A busy member is waited for at most
   * its share of the time left, recomputed for each attempt. Members are taken with the lease
   * asked for; an attempt that must wait for a busy member first gives those it holds a lease long
   * enough to outlive the wait (twice the wait: Redisson's), and sets the asked one once all are
   * held. Throws QuorumError when more members were unreachable than the failure limit allows.
   */
  async #acquireBy(
    ownerId: string,
    deadline: number,
    request: AcquireRequest,
    shared: boolean,
  ): Promise<HeldLock | undefined> {
    const { leaseTime, signal } = request;
    const waitTime = Math.max(0, deadline - now());
    const waitingLease = leaseTime === undefined || 2 * waitTime <= leaseTime ? undefined : 2 * waitTime;
    for (;;) {
      signal?.throwIfAborted();
      const started = now();
      const memberWait = waitTime === 0 ? 0 : Math.max(1, Math.floor((deadline - started) / this.members.length));
      const late = new LateMembers();
      const {
        taken,
        held: members,
        failures,
        extended,
      } = await attemptAll(this.members, {
        ownerId,
        shared,
        memberWait,
        memberLease: leaseTime,
        waitingLease,
        failureLimit: this.#failureLimit,
        signal,
        late: late.offer,
      });
      const held =
        failures.length <= this.#failureLimit
          ? await this.#confirm({ ownerId, shared, taken, members, failures, late }, extended ? leaseTime : undefined)
          : undefined;
      if (!held) await this.#releaseMembers(ownerId, shared, [...taken, ...late.close()]);
      if (signal?.aborted) {
        if (held) await this.release(ownerId, shared).catch(() => undefined);
        throw signal.reason;
      }
      if (held) return held;
      // Shut down meanwhile (its members' waits ended so): the group's wait ends as every wait does.
      this.ctx.assertOpen();
      if (failures.filter((f) => f.reason !== 'busy').length > this.#failureLimit) throw this.#quorumError(failures);
      if (waitTime === 0 || now() >= deadline) return undefined;
      // A short random pause: rivals that failed together do not retry in lockstep.
      await sleep(Math.min(Math.random() * 50, Math.max(0, deadline - now())), signal, this.ctx.closing);
    }
  }

  /**
   * Sets the members' lease to `leaseTime` (given when they were taken with the waiting lease), then
   * makes the group's Liveness: proven while `need` members are, which is Redlock's validity rule
   * (the lease, from before each member granted it, less the clock allowance). A quorum whose
   * validity is already used up is not a hold.
   */
  async #confirm(
    attempt: {
      readonly ownerId: string;
      readonly shared: boolean;
      readonly taken: number[];
      /** The Liveness of each member taken, by position. */
      readonly members: ReadonlyMap<number, Liveness>;
      readonly failures: MemberFailure[];
      readonly late: LateMembers;
    },
    leaseTime: number | undefined,
  ): Promise<HeldLock | undefined> {
    const { ownerId, shared, taken, failures, late } = attempt;
    if (leaseTime !== undefined) {
      for (const { index } of await setLeaseOrGiveBack(this.members, { ownerId, shared }, taken, leaseTime)) {
        failures.push({ index, name: this.members[index]!.name, reason: 'error' });
      }
    }
    const livenesses = taken.flatMap((index) => attempt.members.get(index) ?? []);
    const validUntil = groupProvenUntil(livenesses, this.#need);
    if (validUntil === undefined || validUntil <= now()) return undefined;
    const owner = `${this.ctx.clientId}:${ownerId}`;
    const liveness = this.ctx.livenesses.create(
      { name: this.name, kind: this.kind, key: this.#key, owner },
      validUntil,
      'its members could not be proven held before their leases ran out',
    );
    const group = { members: this.members, ownerId, shared, taken, need: this.#need, late };
    this.#held.set(ownerId, holdGroup(group, liveness, livenesses));
    listening('acquire')?.publish({
      name: this.name,
      kind: this.kind,
      key: this.#key,
      owner,
      holds: 1,
      members: taken.length,
    });
    return { liveness };
  }

  /** Releases one hold; the last one releases every member in parallel and waits for all. */
  async release(ownerId: string, shared = true): Promise<number> {
    this.ctx.assertOpen();
    const hold = this.#held.get(ownerId);
    const owner = `${this.ctx.clientId}:${ownerId}`;
    if (!hold) throw new LockNotHeldError(`Cannot unlock ${this.name}: it is not held by owner ${owner}`);
    if (--hold.count > 0) return hold.count;
    this.#held.delete(ownerId);
    const lost = hold.liveness.lostError;
    hold.liveness.end();
    hold.close();
    // The members were taken as the group's owner was: by calls that may share it, or its own.
    const failures = await this.#releaseMembers(ownerId, hold.shared && shared, hold.taken);
    listening('release')?.publish({
      name: this.name,
      kind: this.kind,
      key: this.#key,
      owner,
      holds: 0,
      held: now() - hold.since,
      failures: failures.length,
    });
    if (lost) throw lost;
    if (failures.length === 0) return 0;
    if (failures.length === hold.taken.length && failures.every((f) => f.reason === 'not-held')) {
      throw new LockLostError(`${this.name} was lost: no member was held any more when it was released`);
    }
    throw new MemberReleaseError(`Released ${this.name} except: ${describeFailures(failures)}`, failures);
  }

  /**
   * Calls the members at `indexes` (default: all) at once: the values by member index, and the
   * failures in index order; a member not held (any more) failed as `not-held`.
   */
  async #onMembers<T>(
    call: (member: MemberCore) => Promise<T>,
    indexes: readonly number[] = this.members.map((_, index) => index),
  ): Promise<{ values: Map<number, T>; failures: MemberFailure[] }> {
    const outcomes = await fanOut(indexes, (index) => call(this.members[index]!));
    const values = new Map<number, T>();
    const failures: MemberFailure[] = [];
    outcomes.forEach((outcome, i) => {
      const index = indexes[i]!;
      if (outcome?.ok) return void values.set(index, outcome.value);
      const error = outcome?.error;
      const notHeld = error instanceof LockNotHeldError;
      const reason = notHeld ? 'not-held' : (outcome?.reason ?? 'timeout');
      failures.push({ index, name: this.members[index]!.name, reason, error });
    });
    return { values, failures: failures.sort((a, b) => a.index - b.index) };
  }

  /** Releases one hold of each member at `indexes`, in parallel; returns those that failed. */
  async #releaseMembers(ownerId: string, shared: boolean, indexes: readonly number[]): Promise<MemberFailure[]> {
    return (await this.#onMembers((member) => member.release(ownerId, shared), indexes)).failures;
  }

  /** Deletes every member whoever holds it, in parallel; true when at least one was locked. */
  async forceUnlock(): Promise<boolean> {
    this.ctx.assertOpen();
    const { values, failures } = await this.#onMembers((member) => member.forceUnlock());
    if (failures.length > 0)
      throw new MemberReleaseError(`Could not force-unlock ${this.name}: ${describeFailures(failures)}`, failures);
    return [...values.values()].some(Boolean);
  }

  /**
   * The state the quorum shares, read from every member at once: locked when at least `need`
   * members are; the TTL of the need-th best member (all for MultiLock, the weakest of the best
   * majority for RedLock); the hold count of this owner's group hold.
   */
  async status(ownerId: string): Promise<LockStatus> {
    this.ctx.assertOpen();
    const { values, failures } = await this.#onMembers((member) => member.status(ownerId));
    if (failures.length > this.#failureLimit) {
      // A status read fails only by timeout or error: never `not-held`.
      throw new QuorumError(`Could not read ${this.name}: ${describeFailures(failures)}`, failures);
    }
    const { locked, held, ttl } = quorumOf([...values.values()], this.#need);
    return { locked, holds: held ? (this.#held.get(ownerId)?.count ?? 1) : 0, ttl };
  }

  #quorumError(failures: MemberFailure[]): QuorumError {
    const n = this.members.length;
    const needed = this.#need < n ? `a majority (${this.#need} of ${n})` : `all ${n} members`;
    return new QuorumError(`Could not reach ${needed} of ${this.name}: ${describeFailures(failures)}`, failures);
  }
}

/** Creates the lock returned by `LockClient.getMultiLock()` / `getRedLock()`. */
export function createMultiLock(ctx: ClientContext, locks: readonly unknown[], kind: MultiLockKind): Lock {
  const handle = new LockHandle(new MultiLockCore(ctx, toMembers(locks), kind));
  groups.add(handle);
  return handle;
}
