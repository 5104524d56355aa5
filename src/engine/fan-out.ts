/**
 * Calls over several servers at once (MultiLock / RedLock members), collecting each member's outcome.
 */
import { RedisUnavailableError } from '../errors.js';

/** How one member's call ended. */
export type MemberOutcome<T> =
  | { readonly ok: true; readonly value: T }
  /** `timeout`: no reply in time (its outcome is unknown); `error`: Redis refused or could not be reached. */
  | { readonly ok: false; readonly reason: 'timeout' | 'error'; readonly error: unknown };

export interface FanOutOptions<T> {
  /** Asked after every outcome: true stops waiting for the members still pending. */
  readonly enough?: (outcomes: readonly (MemberOutcome<T> | undefined)[]) => boolean;
  /** Hears the outcome of a member that settled after the fan-out stopped waiting for it. */
  readonly late?: (index: number, outcome: MemberOutcome<T>) => void;
}

/**
 * Calls `call` for every member at once (each on its own server) and collects the outcomes by
 * member position; `undefined` for a member still pending when `enough` stopped the wait. One
 * helper for every multi-server call: an attempt, a status read, a release, a force-unlock.
 */
export function fanOut<M, T>(
  members: readonly M[],
  call: (member: M, index: number) => Promise<T>,
  options: FanOutOptions<T> = {},
): Promise<(MemberOutcome<T> | undefined)[]> {
  const outcomes: (MemberOutcome<T> | undefined)[] = members.map(() => undefined);
  let pending = members.length;
  let stopped = false;
  return new Promise((resolve) => {
    if (pending === 0) resolve(outcomes);
    members.forEach((member, index) => {
      const settle = (outcome: MemberOutcome<T>): void => {
        if (stopped) return options.late?.(index, outcome);
        outcomes[index] = outcome;
        pending--;
        if (pending === 0 || options.enough?.(outcomes)) {
          stopped = true;
          resolve(outcomes);
        }
      };
      let running: Promise<T>;
      try {
        running = call(member, index);
      } catch (error) {
        running = Promise.reject(error);
      }
      running.then(
        (value) => settle({ ok: true, value }),
        (error: unknown) => settle({ ok: false, reason: failureReason(error), error }),
      );
    });
  });
}

/** A call cut by its time limit (its outcome unknown) rather than refused. */
export function failureReason(error: unknown): 'timeout' | 'error' {
  return error instanceof RedisUnavailableError && error.outcomeUnknown ? 'timeout' : 'error';
}
