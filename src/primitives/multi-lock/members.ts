/** Which locks may be the members of a MultiLock / RedLock, checked when the group is made. */
import type { MemberCore } from '../../engine/lock-core.js';
import { coreOf } from '../../engine/lock-handle.js';

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
