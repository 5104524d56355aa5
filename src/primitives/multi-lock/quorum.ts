/**
 * What a group's members say together: the state a quorum of them shares, and member failures in
 * words for error messages.
 */
import type { MemberFailure } from '../../errors.js';
import type { LockStatus } from '../../engine/lock-core.js';

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

/** `"name" #index: reason` for error messages. */
export function describeFailures(failures: readonly MemberFailure[]): string {
  return failures.map((f) => `"${f.name}" #${f.index} ${f.reason}`).join(', ');
}
