import type { TakenMember } from './quorum.js';

/**
 * Members that answer after a RedLock attempt already holds its majority. The attempt does not
 * wait for them, so a slow or frozen minority adds nothing to the latency; they join the hold when
 * they come, so that it still holds every member that answered, or are given back once the hold
 * is over (released, lost, or never made).
 */
export class LateMembers {
  #waiting: TakenMember[] | undefined = [];
  #join: ((member: TakenMember) => void) | undefined;

  /** Offered by the attempt; false when the member is not wanted any more (the caller gives it back). */
  readonly offer = (member: TakenMember): boolean => {
    if (this.#join) this.#join(member);
    else if (this.#waiting) this.#waiting.push(member);
    else return false;
    return true;
  };

  /** The hold exists: members offered so far, and from now on, go to `join`. */
  attach(join: (member: TakenMember) => void): void {
    const waiting = this.#waiting ?? [];
    this.#waiting = [];
    this.#join = join;
    for (const member of waiting) join(member);
  }

  /** The hold is over or was never made: later offers are refused. Returns members offered and not joined. */
  close(): TakenMember[] {
    const left = this.#waiting ?? [];
    this.#waiting = undefined;
    this.#join = undefined;
    return left;
  }
}
