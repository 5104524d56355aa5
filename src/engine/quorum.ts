import type { ClientContext } from '../context.js';
import type { LockLostError, MemberFailure } from '../errors.js';
import { failureReason, releaseMembers } from './quorum-release.js';
export { describeFailures, forceUnlockMembers, releaseMembers, setLease } from './quorum-release.js';
import { acquireLoop, failedAttempt, type Attempt, type QueuedWait } from './acquire-loop.js';
import { releaseUncertain, watchdogLease, type LockBackend } from './lock-backend.js';

/**
 * The member side of MultiLock / RedLock: one attempt over every member in parallel (giving
 * members back is in quorum-release.ts). Each member is reached through its own client (its own
 * server, watchdog and subscriptions); this module never knows how many servers there are.
 */

/** One member lock: the client it lives on and its backend. */
export interface Member {
  readonly ctx: ClientContext;
  readonly backend: LockBackend;
}

/** A member taken by an attempt. */
export interface TakenMember {
  readonly index: number;
  readonly member: Member;
  /** The member-level owner: `<member client id>:<owner id>`, what a handle of that client would use. */
  readonly owner: string;
  /**
   * Set when the member client's watchdog keeps it alive (no lease): reports when renewal finds the
   * member gone or fails past its lease. No `lockLost` is emitted for a member: only the group's
   * loss counts (a RedLock survives losing a minority).
   */
  readonly lost: MemberLoss | undefined;
  /** Stops the member's renewal (release, failed attempt). */
  readonly stopRenewal: () => void;
}

/** The loss of one member, as its client's watchdog reports it (lighter than an AbortSignal per member). */
export class MemberLoss {
  reason: LockLostError | undefined;
  #listener: ((reason: LockLostError) => void) | undefined;

  report(reason: LockLostError): void {
    if (this.reason !== undefined) return;
    this.reason = reason;
    this.#listener?.(reason);
  }

  /** Calls `listener` when the member is lost (at once if it already is); returns a function that stops it. */
  onLost(listener: (reason: LockLostError) => void): () => void {
    if (this.reason !== undefined) {
      listener(this.reason);
      return () => undefined;
    }
    this.#listener = listener;
    return () => {
      this.#listener = undefined;
    };
  }
}

/** A member failure with the member's position (members of a RedLock often share one name). */
export interface IndexedMemberFailure extends MemberFailure {
  /** Position of the member in the `getMultiLock` / `getRedLock` arguments. */
  readonly index: number;
}

export interface AttemptPlan {
  /** The owner id shared by every member (scope owner or the MultiLock's own id). */
  readonly ownerId: string;
  /** How long each member may wait (ms); 0: one try per member. */
  readonly memberWait: number;
  /** Lease set on each member while acquiring; undefined: the member client's watchdog lease, renewed by it. */
  readonly memberLease: number | undefined;
  /** Failures tolerated before the attempt is given up (0: MultiLock; a minority: RedLock). */
  readonly failureLimit: number;
  readonly signal: AbortSignal | undefined;
  /**
   * Given when members that answer after the quorum is held may still join the hold (see
   * LateMembers): the attempt then stops waiting the moment it holds its quorum and offers them
   * here as they come, giving back those refused. Left out: it waits briefly for them and gives
   * back the ones later still.
   */
  readonly adopt?: (member: TakenMember) => boolean;
}

export interface AttemptResult {
  readonly taken: TakenMember[];
  readonly failures: IndexedMemberFailure[];
}

export function memberOwner(member: Member, ownerId: string): string {
  return `${member.ctx.clientId}:${ownerId}`;
}

type Outcome = { readonly taken: TakenMember } | { readonly failure: IndexedMemberFailure };

async function takeMember(
  member: Member,
  index: number,
  plan: AttemptPlan,
  signal: AbortSignal | undefined,
): Promise<Outcome> {
  const { ctx, backend } = member;
  const owner = memberOwner(member, plan.ownerId);
  const leaseMs = plan.memberLease ?? watchdogLease(ctx.options);
  let acquiredAt = 0;
  let uncertain = false;
  const attempt = async (deadline: number | undefined, place?: QueuedWait): Promise<Attempt<bigint | null>> => {
    const started = Date.now();
    try {
      const result = await backend.attempt(owner, leaseMs, deadline, place);
      if (result.acquired) acquiredAt = started;
      return result;
    } catch (error) {
      uncertain = true;
      // Cut by this member's own wait budget, as for a single lock.
      return failedAttempt(deadline, error);
    }
  };
  // One try (the first round of every attempt) goes straight to acquireLoop's single attempt,
  // past the backend's own wait, which would only hand it there.
  const wait = plan.memberWait === 0 ? acquireLoop : (backend.wait ?? acquireLoop);
  try {
    const value = await wait({
      attempt,
      waiters: ctx.waiters,
      channel: backend.channel,
      waitTime: plan.memberWait,
      signal,
      name: backend.name,
    });
    if (value === undefined) {
      if (uncertain) releaseUncertain(ctx, backend, owner);
      return { failure: { index, name: backend.name, reason: 'busy' } };
    }
    if (plan.memberLease !== undefined)
      return { taken: { index, member, owner, lost: undefined, stopRenewal: () => undefined } };
    // Without a lease the member client's watchdog renews it (batched with that server's other
    // holds) from the moment it was taken, so a long wait for later members cannot expire it.
    const lost = new MemberLoss();
    const target = { name: backend.name, key: backend.key, field: owner, script: backend.renewScript };
    const renewal = ctx.watchdog.add(target, acquiredAt, (error) => lost.report(error));
    const stopRenewal = (): void => ctx.watchdog.remove(renewal);
    return { taken: { index, member, owner, lost, stopRenewal } };
  } catch (error) {
    if (uncertain) releaseUncertain(ctx, backend, owner);
    // The caller aborted while this member was busy.
    if (signal?.aborted) return { failure: { index, name: backend.name, reason: 'busy', error: signal.reason } };
    return { failure: { index, name: backend.name, reason: failureReason(error), error } };
  }
}

/** Once a RedLock holds its majority, the slower members get at least this long (or as long as the majority took). */
const QUORUM_GRACE_MS = 5;

/**
 * One attempt. Every member is tried at once, one try each: uncontended, the attempt costs one
 * member's latency. Under contention it falls back to the seeds' order, which cannot deadlock:
 * it gives back the members taken after the first busy one, waits up to `memberWait` for that
 * one alone, then tries the rest at once again. (Two parties that each took part of the group
 * and waited for the other's part would both sit out their whole wait.) Members taken are
 * returned even when the attempt failed; the caller releases them.
 */
export async function attemptAll(members: readonly Member[], plan: AttemptPlan): Promise<AttemptResult> {
  const { signal } = plan;
  const taken: TakenMember[] = [];
  const failures: IndexedMemberFailure[] = [];
  let busy: number[] = [];
  const need = members.length - plan.failureLimit;
  const tryAtOnce = async (indexes: number[]): Promise<void> => {
    const once = { ...plan, memberWait: 0 };
    const pending = new Set(indexes);
    const started = Date.now();
    let stopWaiting: (() => void) | undefined;
    const quorumReached = new Promise<void>((resolve) => (stopWaiting = resolve));
    let graceTimer: NodeJS.Timeout | undefined;
    const late = new Set<number>();
    const all = Promise.all(
      indexes.map(async (index) => {
        const outcome = await takeMember(members[index]!, index, once, signal);
        if (!pending.delete(index)) {
          // Answered after the attempt stopped waiting for it: joins the hold, or is given back.
          const adopted = late.has(index) && 'taken' in outcome && plan.adopt!(outcome.taken);
          if (!adopted && 'taken' in outcome) void releaseMembers([outcome.taken]);
          return;
        }
        if ('taken' in outcome) taken.push(outcome.taken);
        else if (outcome.failure.reason === 'busy' && plan.memberWait > 0) busy.push(index);
        else failures.push(outcome.failure);
        // A RedLock with its majority does not wait for the slowest members (a frozen or
        // unreachable server would otherwise cost every acquisition a whole commandTimeout):
        // at once when they may join later, else only briefly.
        if (plan.failureLimit > 0 && taken.length >= need && graceTimer === undefined && pending.size > 0) {
          if (plan.adopt) stopWaiting!();
          else graceTimer = setTimeout(stopWaiting!, Math.max(QUORUM_GRACE_MS, Date.now() - started));
        }
      }),
    );
    await Promise.race([all, quorumReached]);
    clearTimeout(graceTimer);
    for (const index of pending) {
      if (plan.adopt) late.add(index);
      // Cut after the quorum was reached: they did not answer in time.
      else failures.push({ index, name: members[index]!.backend.name, reason: 'timeout' });
    }
    pending.clear();
  };
  await tryAtOnce(members.map((_, index) => index));
  while (busy.length > 0 && failures.length <= plan.failureLimit && !signal?.aborted) {
    // Enough members answered that busy ones may be given up without waiting (RedLock).
    if (failures.length + busy.length <= plan.failureLimit) break;
    const first = Math.min(...busy);
    const later = taken.filter((t) => t.index > first);
    taken.splice(0, taken.length, ...taken.filter((t) => t.index < first));
    await releaseMembers(later);
    const outcome = await takeMember(members[first]!, first, plan, signal);
    if ('taken' in outcome) taken.push(outcome.taken);
    else failures.push(outcome.failure);
    const retry = [...busy.filter((i) => i !== first), ...later.map((t) => t.index)];
    busy = [];
    if (failures.length <= plan.failureLimit && !signal?.aborted) await tryAtOnce(retry);
    else
      failures.push(
        ...retry.filter((i) => !later.some((t) => t.index === i)).map((index) => busyFailure(members, index)),
      );
  }
  failures.push(...busy.map((index) => busyFailure(members, index)));
  failures.sort((a, b) => a.index - b.index);
  return { taken, failures };
}

function busyFailure(members: readonly Member[], index: number): IndexedMemberFailure {
  return { index, name: members[index]!.backend.name, reason: 'busy' };
}
