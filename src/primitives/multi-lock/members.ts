import { now } from '../../clock.js';
import type { LockStatus, MemberCore } from '../../engine/lock-core.js';
import { coreOf } from '../../engine/lock-handle.js';
import { followMembers, type Liveness } from '../../engine/liveness.js';

/** A MultiLock's members: which locks may be members, members that answer late, and how long one lock() attempt waits for them. */

/** `lock()` without waitTime retries attempts of `members × 1500 ms`, randomised with a lease so rivals drift apart. */
export function attemptWait(members: number, leaseTime: number | undefined): number {
  const base = members * 1500;
  if (leaseTime === undefined) return base;
  if (leaseTime <= 2000) return 2000;
  const low = leaseTime <= base ? leaseTime / 2 : base;
  return Math.floor(low + Math.random() * (leaseTime - low));
}

/**
 * Members that answer after a RedLock attempt already holds its majority. They join the hold when
 * they come (only when they carry the hold's own lease), so that it holds every member that
 * answered; before the hold exists they wait here; once it is over (or was never made) they are
 * refused, and the attempt gives them back.
 */
export class LateMembers {
  #waiting: number[] | undefined = [];
  #join: ((index: number) => void) | undefined;

  constructor(private readonly joinable: boolean) {}

  readonly offer = (index: number): boolean => {
    if (!this.joinable) return false;
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
    readonly taken: number[];
    readonly need: number;
    readonly late: LateMembers;
  },
  liveness: Liveness,
  memberLivenesses: readonly Liveness[],
): GroupHold {
  const { members, ownerId, taken, need, late } = group;
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
  return { count: 1, taken, liveness, close, since: now() };
}

/** `"name" #index: reason` for error messages. */
export function describeFailures(failures: readonly { name: string; index: number; reason: string }[]): string {
  return failures.map((f) => `"${f.name}" #${f.index} ${f.reason}`).join(', ');
}

/** Present on every MultiLock / RedLock: a group cannot be a member of another. */
export const groups = new WeakSet<object>();

/** Checks the members: Locks of latchkey clients, at least one, none twice, no nested group. */
export function toMembers(locks: readonly unknown[]): MemberCore[] {
  if (locks.length === 0) throw new RangeError('Expected `locks` to hold at least one Lock, got none');
  const members: MemberCore[] = [];
  locks.forEach((lock, i) => {
    if (typeof lock === 'object' && lock !== null && groups.has(lock)) {
      throw new TypeError(`Expected \`locks[${i}]\` to be a single Lock: a MultiLock / RedLock cannot be a member`);
    }
    if (Array.isArray(lock)) {
      throw new TypeError(`Expected \`locks[${i}]\` to be a Lock, got an array: spread it, getMultiLock(...locks)`);
    }
    const core = coreOf(lock) as MemberCore | undefined;
    if (core === undefined || typeof core.livenessOf !== 'function') {
      throw new TypeError(
        `Expected \`locks[${i}]\` to be a Lock from a LockClient, got ${lock === null ? 'null' : typeof lock}`,
      );
    }
    const twin = members.findIndex((other) => other.identities[0] === core.identities[0] && other.kind === core.kind);
    if (twin >= 0) {
      throw new RangeError(
        `Expected distinct locks: \`locks[${i}]\` is the same lock as \`locks[${twin}]\` ("${core.name}")`,
      );
    }
    members.push(core);
  });
  return members;
}

/**
 * What the members' states say of the group: locked when at least `need` members are; held by
 * the asking owner when `need` members are; the TTL of the need-th best member (all of them for
 * MultiLock, the weakest of the best majority for RedLock; -1 ranks above any TTL).
 */
export function quorumOf(
  statuses: readonly LockStatus[],
  need: number,
): { locked: boolean; held: boolean; ttl: number } {
  const nth = (values: number[]): number | undefined => values.sort((a, b) => b - a)[need - 1];
  const locked = statuses.filter((s) => s.locked).length >= need;
  const held = (nth(statuses.map((s) => s.holds)) ?? 0) > 0;
  const ttl = nth(statuses.map((s) => (s.ttl === -1 ? Number.MAX_SAFE_INTEGER : s.ttl))) ?? -2;
  return { locked, held, ttl: !locked ? -2 : ttl === Number.MAX_SAFE_INTEGER ? -1 : ttl };
}
