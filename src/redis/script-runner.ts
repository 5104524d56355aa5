import { RedisUnavailableError } from '../errors.js';
import type { LuaScript, RedisConnection, ScriptArg, ScriptReply } from './connection.js';

/**
 * Runs a script, failing with RedisUnavailableError when no reply came within `commandTimeout`,
 * or by `deadline` (epoch ms) when that comes first (a wait's own end).
 */
export type ScriptRunner = (
  script: LuaScript,
  keys: readonly string[],
  args: readonly ScriptArg[],
  deadline?: number,
) => Promise<ScriptReply>;

/** A call cut by a caller's deadline still gets this long, so that the last attempt of a wait can run. */
export const MIN_CALL_MS = 50;

export function createScriptRunner(connection: RedisConnection, commandTimeout: number): ScriptRunner {
  return (script, keys, args, deadline) => {
    const limit =
      deadline === undefined ? commandTimeout : Math.min(commandTimeout, Math.max(MIN_CALL_MS, deadline - Date.now()));
    return withTimeout(connection.evalScript(script, keys, args), limit, () => {
      return new RedisUnavailableError(`Redis did not answer script ${script.name} within ${Math.round(limit)} ms`);
    });
  };
}

/** Settles like `promise`, or rejects with `onTimeout()` after `ms`; a late settlement is absorbed. */
export function withTimeout<T>(promise: Promise<T>, ms: number, onTimeout: () => Error): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(onTimeout()), ms);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}

/** Pause before re-sending a call that failed, growing to at most 1 s. */
export function retryPause(failures: number): number {
  return Math.min(1_000, 25 * 2 ** Math.min(failures, 6)) * (0.5 + Math.random() / 2);
}

/**
 * Runs a script that is safe to run twice (it gives the first run's outcome on a repeat) until its
 * outcome is known: a reply, or Redis' own error. A call whose reply was lost (timeout, dropped
 * connection) is sent again, after a short pause, until `until` (epoch ms) passes; then the last
 * RedisUnavailableError is thrown and the outcome stays unknown.
 */
export async function runUntilKnown(
  run: ScriptRunner,
  script: LuaScript,
  keys: readonly string[],
  args: readonly ScriptArg[],
  until: number,
): Promise<ScriptReply> {
  for (let failures = 0; ; failures++) {
    try {
      return await run(script, keys, args, until);
    } catch (error) {
      if (!(error instanceof RedisUnavailableError)) throw error;
      const pause = retryPause(failures);
      if (Date.now() + pause >= until) throw error;
      await new Promise((resolve) => setTimeout(resolve, pause));
    }
  }
}
