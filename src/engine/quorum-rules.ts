import type { LateMembers } from './late-members.js';
import type { LockStatus } from './lock-backend.js';
import type { TryLockOptions } from '../options.js';
import { checkOptionalDuration, checkOptions, checkSignal } from '../validate.js';
import { LockHandle } from './lock-handle.js';
import { LockLostError, QuorumError } from '../errors.js';
import {
  describeFailures,
  memberOwner,
  releaseMembers,
  setLease,
  type IndexedMemberFailure,
  type Member,
  type TakenMember,
} from './quorum.js';

/** The numbers and checks of MultiLock / RedLock, apart from the class that uses them. */

/** The options of lock() / tryLock() / withLock() / acquire(), checked. */
export interface Parsed {
  readonly waitTime: number | undefined;
  readonly leaseTime: number | undefined;
  readonly signal: AbortSignal | undefined;
}

export function parseOptions(options: unknown, allowWait: boolean): Parsed {
  const given = checkOptions<TryLockOptions>(options);
  return {
    waitTime: allowWait ? checkOptionalDuration(given.waitTime, 'waitTime') : undefined,
    leaseTime: checkOptionalDuration(given.leaseTime, 'leaseTime', true),
    signal: checkSignal(given.signal),
  };
}

/** Present on every MultiLock / RedLock: a group cannot be a member of another. */
export const GROUP = Symbol('latchkey.group');

/** Seeds: each `lock()` attempt waits `members x 1500 ms`, randomised with a lease so rivals drift apart. */
export function attemptWait(members: number, leaseTime: number | undefined): number {
  const base = members * 1500;
  if (leaseTime === undefined) return base;
  if (leaseTime <= 2000) return 2000;
  const low = leaseTime <= base ? leaseTime / 2 : base;
  return Math.floor(low + Math.random() * (leaseTime - low));
}

/** Redlock's allowance for clock drift between the servers and us: 1% of the lease plus 2 ms. */
export function clockDrift(leaseMs: number): number {
  return Math.floor(leaseMs * 0.01) + 2;
}

export function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** Checks the members: Locks of latchkey clients, at least one, none twice, no nested group. */
export function toMembers(locks: readonly unknown[]): Member[] {
  if (locks.length === 0) throw new RangeError('Expected `locks` to hold at least one Lock, got none');
  const members: Member[] = [];
  locks.forEach((lock, i) => {
    if (typeof lock === 'object' && lock !== null && GROUP in lock) {
      throw new TypeError(`Expected \`locks[${i}]\` to be a single Lock: a MultiLock / RedLock cannot be a member`);
    }
    if (Array.isArray(lock)) {
      throw new TypeError(`Expected \`locks[${i}]\` to be a Lock, got an array: spread it, getMultiLock(...locks)`);
    }
    if (!(lock instanceof LockHandle)) {
      throw new TypeError(
        `Expected \`locks[${i}]\` to be a Lock from a LockClient, got ${lock === null ? 'null' : typeof lock}`,
      );
    }
    const member = lock.member;
    const twin = members.findIndex((other) => other.ctx === member.ctx && other.backend.key === member.backend.key);
    if (twin >= 0)
      throw new RangeError(
        `Expected distinct locks: \`locks[${i}]\` is the same lock as \`locks[${twin}]\` ("${lock.name}")`,
      );
    members.push(member);
  });
  return members;
}

/**
 * The status the quorum shares, read from every member at once: locked when at least `need`
 * members are locked; holds and TTL of the need-th best member (all for MultiLock, the weakest of
 * the best majority for RedLock). Throws QuorumError when too many members could not be read.
 */
export async function quorumStatus(
  members: readonly Member[],
  ownerId: string,
  failureLimit: number,
  name: string,
): Promise<LockStatus> {
  const need = members.length - failureLimit;
  const results = await Promise.allSettled(members.map((m) => m.backend.status(memberOwner(m, ownerId))));
  const statuses: LockStatus[] = [];
  const failures: IndexedMemberFailure[] = [];
  results.forEach((r, index) => {
    if (r.status === 'fulfilled') statuses.push(r.value);
    else failures.push({ index, name: members[index]!.backend.name, reason: 'error', error: r.reason as unknown });
  });
  if (failures.length > failureLimit)
    throw new QuorumError(`Could not read ${name}: ${describeFailures(failures)}`, failures);
  const nth = (values: number[]): number | undefined => values.sort((a, b) => b - a)[need - 1];
  const locked = statuses.filter((s) => s.locked).length >= need;
  const holds = nth(statuses.map((s) => s.holds)) ?? 0;
  // No expiry ranks above any TTL.
  const ttl = nth(statuses.map((s) => (s.ttl === -1 ? Number.MAX_SAFE_INTEGER : s.ttl))) ?? -2;
  return { locked, holds, ttl: !locked ? -2 : ttl === Number.MAX_SAFE_INTEGER ? -1 : ttl };
}

/** Watches a group for its loss; members that join the hold later are watched too. */
export interface LossWatch {
  add(member: TakenMember): void;
  stop(): void;
}

/**
 * Calls `lose` once the group is known lost: when its lease (`validity`, finite) runs out, or,
 * for members kept by their watchdogs, when fewer than `need` of them remain.
 */
export function watchLoss(
  taken: readonly TakenMember[],
  need: number,
  validity: number,
  name: string,
  lose: (error: LockLostError) => void,
): LossWatch {
  if (Number.isFinite(validity)) {
    const timer = setTimeout(() => lose(new LockLostError(`${name} expired: its lease ran out`)), validity);
    timer.unref();
    return { add: () => undefined, stop: () => clearTimeout(timer) };
  }
  const cleanups: (() => void)[] = [];
  let alive = 0;
  const add = ({ lost, index }: TakenMember): void => {
    alive++;
    if (!lost) return;
    const onLost = (cause: LockLostError): void => {
      alive--;
      if (alive >= need) return;
      lose(
        new LockLostError(`${name} was lost: member #${index} was lost and fewer than ${need} members remain`, {
          cause,
        }),
      );
    };
    cleanups.push(lost.onLost(onLost));
  };
  taken.forEach(add);
  return { add, stop: () => cleanups.forEach((cleanup) => cleanup()) };
}

/**
 * Watches the members held now and those that join later (`late`); returns what stops both, and
 * turns away members that come after it.
 */
export function watchGroup(
  taken: TakenMember[],
  late: LateMembers | undefined,
  need: number,
  validity: number,
  name: string,
  lose: (error: LockLostError) => void,
): () => void {
  const watch = watchLoss(taken, need, validity, name, lose);
  late?.attach((member) => {
    taken.push(member);
    watch.add(member);
  });
  return () => {
    late?.close();
    watch.stop();
  };
}

/** QuorumError for an attempt that could not reach enough members. */
export function quorumError(
  name: string,
  need: number,
  members: number,
  failures: IndexedMemberFailure[],
): QuorumError {
  const needed = need < members ? `a majority (${need} of ${members})` : `all ${members} members`;
  return new QuorumError(`Could not reach ${needed} of ${name}: ${describeFailures(failures)}`, failures);
}

/**
 * Confirms an attempt that took enough members: sets each one's expiry to the lease (when one was
 * asked for and the members were taken with a longer one), then applies Redlock's validity rule.
 * Returns the validity left (ms; Infinity for watchdog-kept holds), or undefined when the quorum
 * did not survive. Members that failed are moved from `taken` to `failures`; the caller releases
 * what is left in `taken` on failure.
 */
export async function confirmQuorum(
  taken: TakenMember[],
  failures: IndexedMemberFailure[],
  need: number,
  leaseTime: number | undefined,
  memberLease: number | undefined,
  attemptStart: number,
): Promise<number | undefined> {
  let start = attemptStart;
  if (leaseTime !== undefined && memberLease !== leaseTime) {
    start = Date.now();
    const failed = await setLease(taken, Math.ceil(leaseTime));
    if (failed.length > 0) {
      void releaseMembers(failed);
      taken.splice(0, taken.length, ...taken.filter((t) => !failed.includes(t)));
      failures.push(...failed.map((t) => ({ index: t.index, name: t.member.backend.name, reason: 'error' as const })));
      if (taken.length < need) return undefined;
    }
  }
  if (leaseTime === undefined) return taken.some((t) => t.lost?.reason !== undefined) ? undefined : Infinity;
  // What is left of the lease after the time spent taking it and the allowance for clock drift.
  const validity = leaseTime - (Date.now() - start) - clockDrift(leaseTime);
  return validity > 0 ? validity : undefined;
}
