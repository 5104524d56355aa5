/**
 * One owner's hold on a group: the members it holds, its Liveness following theirs, and members
 * that answer after the attempt stopped waiting for them.
 */
import { now } from '../../clock.js';
import type { MemberCore } from '../../engine/lock-core.js';
import { followMembers, type Liveness } from '../../engine/liveness.js';

/**
 * Members that answer after a RedLock attempt already holds its majority. They join the hold when
 * they come (only when they carry the lease asked for, not an attempt's waiting lease), so that it
 * holds every member that answered; before the hold exists they wait here; once it is over (or was
 * never made) they are refused, and the attempt gives them back.
 */
export class LateMembers {
  #waiting: number[] | undefined = [];
  #join: ((index: number) => void) | undefined;

  readonly offer = (index: number, askedLease: boolean): boolean => {
    if (!askedLease) return false;
    if (this.#join) this.#join(index);
    else if (this.#waiting) this.#waiting.push(index);
    else return false;
    return true;
  };

  attach(join: (index: number) => void): void {
    const waiting = this.#waiting ?? [];
    this.#waiting = [];
    this.#join = join;
    waiting.forEach(join);
  }

  /** Refuses later offers; returns the members offered and not joined. */
  close(): number[] {
    const left = this.#join ? [] : (this.#waiting ?? []);
    this.#waiting = undefined;
    this.#join = undefined;
    return left;
  }
}

/** One owner's hold on the group. Re-entry only counts up locally: the members are already held. */
export interface GroupHold {
  count: number;
  /** Positions of the members held; grows when late members join. */
  readonly taken: number[];
  readonly liveness: Liveness;
  /** Whether other calls may use this owner at the same time (a scope's, a holder callback's). */
  readonly shared: boolean;
  /** Stops the group following its members, and turns late members away. */
  readonly close: () => void;
  readonly since: number;
}

/**
 * The hold of `ownerId` on a group whose members at `taken` it holds: the group's `liveness`
 * follows theirs (`memberLivenesses`), a lost group stops renewing its members (as for a single
 * lock, what is left of it expires), and late members join it.
 */
export function holdGroup(
  group: {
    readonly members: readonly MemberCore[];
    readonly ownerId: string;
    readonly shared: boolean;
    readonly taken: number[];
    readonly need: number;
    readonly late: LateMembers;
  },
  liveness: Liveness,
  memberLivenesses: readonly Liveness[],
): GroupHold {
  const { members, ownerId, shared, taken, need, late } = group;
  const follow = followMembers(liveness, memberLivenesses, need);
  liveness.watch(() => {
    if (liveness.lostError) for (const index of taken) members[index]!.stopRenewing(ownerId);
  });
  late.attach((index) => {
    const member = members[index]!.livenessOf(ownerId);
    if (!member) return;
    taken.push(index);
    follow.add(member);
  });
  const close = (): void => {
    late.close();
    follow.stop();
  };
  return { count: 1, taken, liveness, shared, close, since: now() };
}
