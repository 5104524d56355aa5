/**
 * The one polling helper of the tests, the deployments and the bench's Cluster: wait for state
 * that settles asynchronously, bounded, failing with what was last seen. No node:test import here,
 * so the bench and the fault runner may use it too.
 */

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Records what a probe saw last (for the failure message); returns undefined: "not yet". */
export type Note = (state: string) => undefined;

export interface EventuallyOptions {
  /** Pause between probes, ms. */
  readonly every?: number;
  /**
   * Keep polling when the probe throws (a server still starting, a frozen node): its last error is
   * reported if time runs out. Off by default: an error then fails the wait at once.
   */
  readonly retryErrors?: boolean;
}

/**
 * Polls `probe` until it returns a value other than `false` or `undefined`, and resolves with it;
 * fails after `ms` with `what` and the last state the probe noted. A boolean check resolves with
 * `true`.
 */
export async function eventually<T>(
  probe: (note: Note) => T | false | undefined | Promise<T | false | undefined>,
  ms = 2_000,
  what = 'condition',
  { every = 10, retryErrors = false }: EventuallyOptions = {},
): Promise<T> {
  const deadline = Date.now() + ms;
  let last: string | undefined;
  const note: Note = (state) => {
    last = state;
    return undefined;
  };
  for (;;) {
    try {
      const value = await probe(note);
      if (value !== false && value !== undefined) return value;
    } catch (error) {
      if (!retryErrors) throw error;
      last = `error: ${error instanceof Error ? error.message : String(error)}`;
    }
    if (Date.now() > deadline) {
      throw new Error(`${what} did not hold within ${ms} ms${last === undefined ? '' : ` (last seen: ${last})`}`);
    }
    await sleep(every);
  }
}
