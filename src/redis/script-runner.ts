import { DEADLINE_MARGIN_MS, MIN_CALL_MS } from '../engine/deadline.js';
import { TimeoutList } from '../engine/timeout-list.js';
import { RedisUnavailableError } from '../errors.js';
import type { LuaScript, RedisConnection, ScriptArg, ScriptReply } from './connection.js';

/** Runs scripts with a time limit, so that no caller waits on an unreachable Redis forever. */
export type ScriptRunner = (
  script: LuaScript,
  keys: readonly string[],
  args: readonly ScriptArg[],
  deadline?: number,
) => Promise<ScriptReply>;

/** A call in flight, until it settles or its commandTimeout runs out. */
interface InFlight {
  readonly script: LuaScript;
  readonly reject: (error: Error) => void;
}

const timedOut = (script: LuaScript, ms: number): RedisUnavailableError =>
  new RedisUnavailableError(`Redis did not answer script ${script.name} within ${Math.round(ms)} ms`);

export function createScriptRunner(connection: RedisConnection, commandTimeout: number): ScriptRunner {
  // Every call gets the same limit, so one list on one timer bounds them all: a setTimeout and
  // clearTimeout per call would create and drop the timer list each time round a lock()/unlock()
  // loop.
  const inFlight = new TimeoutList<InFlight>(commandTimeout, (call) =>
    call.reject(timedOut(call.script, commandTimeout)),
  );
  return (script, keys, args, deadline) => {
    if (deadline !== undefined) {
      const untilDeadline = Math.max(MIN_CALL_MS, deadline - Date.now() + DEADLINE_MARGIN_MS);
      // Cut by the caller's deadline (a wait with a waitTime) when that comes first.
      if (untilDeadline < commandTimeout) {
        return withTimeout(connection.evalScript(script, keys, args), untilDeadline, () =>
          timedOut(script, untilDeadline),
        );
      }
    }
    // Sent first: nothing of the bookkeeping below delays the write (a release's is a hand-over's).
    const call = connection.evalScript(script, keys, args);
    return new Promise<ScriptReply>((resolve, reject) => {
      const entry = inFlight.add({ script, reject });
      call.then(
        (reply) => {
          inFlight.remove(entry);
          resolve(reply);
        },
        (error: unknown) => {
          inFlight.remove(entry);
          reject(error);
        },
      );
    });
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
