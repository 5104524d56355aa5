import { MemberReleaseError, type MemberFailure, type MemberReleaseFailure } from '../errors.js';
import type { Member, TakenMember } from './quorum.js';

/** Giving members back: release, setting their lease, and what is reported when that fails. */

/** A call cut by its time limit (the script runner's message) rather than refused. */
export function failureReason(error: unknown): 'timeout' | 'error' {
  return error instanceof Error && /did not answer/.test(error.message) ? 'timeout' : 'error';
}

/** Releases one hold of each taken member, all in parallel; returns the members that failed. */
export async function releaseMembers(taken: readonly TakenMember[]): Promise<MemberReleaseFailure[]> {
  const failures: MemberReleaseFailure[] = [];
  await Promise.all(
    taken.map(async ({ index, member, owner, stopRenewal }) => {
      stopRenewal();
      const { holds } = member.ctx;
      const { key, name } = member.backend;
      try {
        const left = await member.backend.release(owner);
        if (left >= 0) return holds.released(key, owner, left);
        failures.push({ index, name, reason: 'not-held' });
      } catch (error) {
        failures.push({ index, name, reason: failureReason(error), error });
      }
      // A single-lock hold of the same owner (scope re-entry) stops renewing too, as its unlock would.
      const hold = holds.get(key, owner);
      if (hold) holds.drop(hold);
    }),
  );
  return failures.sort((a, b) => a.index - b.index);
}

/** Sets each taken member's expiry to `leaseMs` in parallel; returns the members that could not be set. */
export async function setLease(taken: readonly TakenMember[], leaseMs: number): Promise<TakenMember[]> {
  const failed: TakenMember[] = [];
  await Promise.all(
    taken.map(async (entry) => {
      const { ctx, backend } = entry.member;
      const reply = await ctx.run(backend.renewScript, [backend.key], [entry.owner, leaseMs]).catch(() => null);
      if (!Array.isArray(reply) || reply[0] !== 1) failed.push(entry);
    }),
  );
  return failed;
}

/** `"name" #index: reason` for error messages. */
export function describeFailures(
  failures: readonly (MemberFailure & { index: number })[] | readonly MemberReleaseFailure[],
): string {
  return failures.map((f) => `"${f.name}" #${f.index} ${f.reason}`).join(', ');
}

/** Deletes every member whoever holds it, in parallel; true when at least one was locked. */
export async function forceUnlockMembers(members: readonly Member[], name: string): Promise<boolean> {
  const results = await Promise.allSettled(members.map((m) => m.backend.forceUnlock()));
  const failures: MemberReleaseFailure[] = [];
  results.forEach((r, index) => {
    if (r.status === 'rejected')
      failures.push({
        index,
        name: members[index]!.backend.name,
        reason: failureReason(r.reason),
        error: r.reason as unknown,
      });
  });
  if (failures.length > 0)
    throw new MemberReleaseError(`Could not force-unlock ${name}: ${describeFailures(failures)}`, failures);
  return results.some((r) => r.status === 'fulfilled' && r.value);
}
