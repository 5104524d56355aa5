import { DEADLINE_MARGIN_MS, MIN_CALL_MS } from '../engine/deadline.js';
import { RedisUnavailableError } from '../errors.js';
import type { LuaScript, RedisConnection, ScriptArg, ScriptReply } from './connection.js';

/** Runs scripts with a time limit, so that no caller waits on an unreachable Redis forever. */
export type ScriptRunner = (
  script: LuaScript,
  keys: readonly string[],
  args: readonly ScriptArg[],
  deadline?: number,
) => Promise<ScriptReply>;

export function createScriptRunner(connection: RedisConnection, commandTimeout: number): ScriptRunner {
  return (script, keys, args, deadline) => {
    const call = connection.evalScript(script, keys, args);
    const untilDeadline =
      deadline === undefined ? Infinity : Math.max(MIN_CALL_MS, deadline - Date.now() + DEADLINE_MARGIN_MS);
    const limit = Math.min(commandTimeout, untilDeadline);
    return withTimeout(
      call,
      limit,
      () => new RedisUnavailableError(`Redis did not answer script ${script.name} within ${Math.round(limit)} ms`),
    );
  };
}

/** Rejects with `onTimeout()` after `ms`; a late settlement of `promise` is absorbed. */
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

/**
 * The connection with every subscribe bounded by `commandTimeout`: a frozen server fails it with
 * RedisUnavailableError instead of hanging, and a subscription confirmed too late is dropped.
 */
export function withBoundedSubscribe(connection: RedisConnection, commandTimeout: number): RedisConnection {
  return {
    evalScript: (script, keys, args) => connection.evalScript(script, keys, args),
    batchGroup: (key) => connection.batchGroup(key),
    close: () => connection.close(),
    subscribe(channel, listener) {
      let timedOut = false;
      const subscribing = connection.subscribe(channel, listener);
      subscribing.then((unsubscribe) => (timedOut ? unsubscribe() : undefined)).catch(() => undefined);
      return withTimeout(subscribing, commandTimeout, () => {
        timedOut = true;
        return new RedisUnavailableError(
          `Redis did not confirm the subscription to ${channel} within ${commandTimeout} ms`,
        );
      });
    },
  };
}
