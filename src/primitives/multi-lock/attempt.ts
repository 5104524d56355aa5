/**
 * One attempt to take a group's members (Redisson's algorithm, with the members of an attempt
 * taken at once), and how long one `lock()` attempt may wait for them.
 */
import { now } from '../../clock.js';
import type { MemberFailure } from '../../errors.js';
import { fanOut, type MemberOutcome } from '../../engine/fan-out.js';
import type { HeldLock, MemberCore } from '../../engine/lock-core.js';
import type { Liveness } from '../../engine/liveness.js';

/** `lock()` without waitTime retries attempts of `members × 1500 ms`, randomised with a lease so rivals drift apart. */
export function attemptWait(members: number, leaseTime: number | undefined): number {
  const base = members * 1500;
  if (leaseTime === undefined) return base;
  if (leaseTime <= 2000) return 2000;
  const low = leaseTime <= base ? leaseTime / 2 : base;
  return Math.floor(low + Math.random() * (leaseTime - low));
}

export interface AttemptPlan {
  /** The owner id of the group's hold, shared by every member. */
  readonly ownerId: string;
  /** Other calls may use that owner at the same time (see LockCore.acquire). */
  readonly shared: boolean;
  /** How long a busy member may be waited for (ms); 0: one try per member. */
  readonly memberWait: number;
  /** The lease asked for, set on each member as it is taken; undefined: its own client's watchdog keeps it. */
  readonly memberLease: number | undefined;
  /**
   * A lease long enough that members taken before a wait for a busy one outlive it (twice the
   * wait), given to them before the attempt waits and to every member taken after; undefined: the
   * asked lease outlives any wait already.
   */
  readonly waitingLease: number | undefined;
  /** Failures tolerated (0: MultiLock; a minority: RedLock). */
  readonly failureLimit: number;
  readonly signal: AbortSignal | undefined;
  /**
   * A member taken after the attempt stopped waiting for it (a RedLock does not wait for its
   * slowest members once it has a majority), and whether it was given the asked lease: true when
   * the hold takes it, false to give it back.
   */
  readonly late: (index: number, askedLease: boolean) => boolean;
}

export interface AttemptResult {
  /** Positions of the members taken; the caller releases them when the attempt fails. */
  readonly taken: number[];
  /** The Liveness of each member taken, by position. */
  readonly held: ReadonlyMap<number, Liveness>;
  readonly failures: MemberFailure[];
  /** The members taken carry the waiting lease: the asked one is still to be set. */
  readonly extended: boolean;
}

/**
 * One attempt of MultiLock / RedLock. Every member is tried at once, one try each: uncontended,
 * the attempt costs one member's latency. Under contention it falls back to the order the
 * algorithm is written in, which cannot deadlock: it gives back the members taken after the first
 * busy one, waits up to `memberWait` for that one alone, then tries the rest at once again. (Two
 * parties that each took part of the group and waited for the other's part would both sit out
 * their whole wait.)
 */
export async function attemptAll(members: readonly MemberCore[], plan: AttemptPlan): Promise<AttemptResult> {
  const taken: number[] = [];
  const held = new Map<number, Liveness>();
  const failures: MemberFailure[] = [];
  const need = members.length - plan.failureLimit;
  const { ownerId, shared } = plan;
  let lease = plan.memberLease;
  const take = (index: number, wait: number): Promise<HeldLock | undefined> =>
    members[index]!.acquire(
      ownerId,
      { leaseTime: lease, deadline: now() + wait, signal: plan.signal, member: true },
      shared,
    );
  const release = (index: number): Promise<unknown> => members[index]!.release(ownerId, shared).catch(() => undefined);
  const record = (index: number, outcome: MemberOutcome<HeldLock | undefined> | undefined, busy: number[]): void => {
    if (outcome === undefined) failures.push({ index, name: members[index]!.name, reason: 'timeout' });
    else if (!outcome.ok)
      failures.push({ index, name: members[index]!.name, reason: outcome.reason, error: outcome.error });
    else if (outcome.value) {
      taken.push(index);
      held.set(index, outcome.value.liveness);
    } else if (plan.memberWait > 0) busy.push(index);
    else failures.push({ index, name: members[index]!.name, reason: 'busy' });
  };
  const tryAtOnce = async (indexes: number[]): Promise<number[]> => {
    const busy: number[] = [];
    const before = taken.length;
    const askedLease = lease === plan.memberLease;
    const outcomes = await fanOut(indexes, (index) => take(index, 0), {
      // A RedLock with its majority does not wait for the slowest members (a frozen server would
      // otherwise cost every acquisition a whole commandTimeout).
      enough: (settled) => plan.failureLimit > 0 && before + settled.filter((o) => o?.ok && o.value).length >= need,
      late: (position, outcome) => {
        const index = indexes[position]!;
        if (outcome.ok && outcome.value && !plan.late(index, askedLease)) void release(index);
      },
    });
    outcomes.forEach((outcome, position) => {
      // Still pending: it may yet join the hold (see `late`), so it is no failure.
      if (outcome !== undefined || plan.failureLimit === 0) record(indexes[position]!, outcome, busy);
    });
    return busy;
  };

  // Gives the members taken `leaseMs`. One that cannot be given it leaves the attempt, given back:
  // as busy when its hold ran out meanwhile (the attempt may be tried again), as failed when its
  // call failed.
  const extendTaken = async (leaseMs: number): Promise<void> => {
    for (const { index, outcome } of await setLeaseOrGiveBack(members, plan, taken, leaseMs)) {
      const reason = outcome === undefined ? 'timeout' : outcome.ok ? 'busy' : outcome.reason;
      held.delete(index);
      const error = outcome?.ok === false ? { error: outcome.error } : {};
      failures.push({ index, name: members[index]!.name, reason, ...error });
    }
  };

  let busy = await tryAtOnce(members.map((_, index) => index));
  while (busy.length > 0 && failures.length <= plan.failureLimit && !plan.signal?.aborted) {
    // Enough members answered that the busy ones may be given up without waiting (RedLock).
    if (failures.length + busy.length <= plan.failureLimit) break;
    const first = Math.min(...busy);
    const later = taken.filter((index) => index > first);
    taken.splice(0, taken.length, ...taken.filter((index) => index < first));
    for (const index of later) held.delete(index);
    await Promise.all(later.map(release));
    if (plan.waitingLease !== undefined && lease !== plan.waitingLease) {
      // Uncontended, an attempt never gets here and its members keep the asked lease: no call
      // more. Those kept must now outlive the wait: they are given the waiting lease first.
      lease = plan.waitingLease;
      await extendTaken(plan.waitingLease);
      if (failures.length > plan.failureLimit) break;
    }
    const waited: number[] = [];
    const [outcome] = await fanOut([first], (index) => take(index, plan.memberWait));
    record(first, outcome, waited);
    for (const index of waited) failures.push({ index, name: members[index]!.name, reason: 'busy' });
    const rest = busy.filter((index) => index !== first);
    if (failures.length > plan.failureLimit || plan.signal?.aborted) {
      // Given up: the other busy members are not tried again.
      busy = rest;
      break;
    }
    busy = await tryAtOnce([...rest, ...later]);
  }
  for (const index of busy) failures.push({ index, name: members[index]!.name, reason: 'busy' });
  failures.sort((a, b) => a.index - b.index);
  return { taken, held, failures, extended: lease !== plan.memberLease };
}

/**
 * Sets `leaseMs` on the members at `taken`, held by `owner`: those it could not be set on (their
 * hold ran out, or the call failed) are given back and leave `taken`. Returns them, each with the
 * outcome of its call.
 */
export async function setLeaseOrGiveBack(
  members: readonly MemberCore[],
  owner: { readonly ownerId: string; readonly shared: boolean },
  taken: number[],
  leaseMs: number,
): Promise<{ index: number; outcome: MemberOutcome<boolean> | undefined }[]> {
  const { ownerId, shared } = owner;
  const outcomes = await fanOut(taken, (index) => members[index]!.setLease(ownerId, leaseMs));
  const dropped = taken.flatMap((index, position) => {
    const outcome = outcomes[position];
    return outcome?.ok && outcome.value ? [] : [{ index, outcome }];
  });
  await Promise.all(dropped.map(({ index }) => members[index]!.release(ownerId, shared).catch(() => undefined)));
  const kept = taken.filter((index) => !dropped.some((member) => member.index === index));
  taken.splice(0, taken.length, ...kept);
  return dropped;
}
