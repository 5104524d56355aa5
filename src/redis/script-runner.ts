/**
 * Runs scripts with a time limit (commandTimeout, or the caller's deadline), and sends a call again
 * until its outcome is known.
 */
import { now } from '../clock.js';
import { DeadlineQueue, type Due } from '../engine/deadline-queue.js';
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

const noReply = (script: LuaScript, ms: number): RedisUnavailableError =>
  new RedisUnavailableError(`Redis did not answer script ${script.name} within ${Math.round(ms)} ms`, {
    outcomeUnknown: true,
  });

/** Calls cut by their caller's own deadline before commandTimeout: a wait's time ran out, not Redis. */
const cutCalls = new WeakSet<Error>();

function cutByDeadline(script: LuaScript, ms: number): RedisUnavailableError {
  const error = noReply(script, ms);
  cutCalls.add(error);
  return error;
}

/** Whether `error` is a call cut by its caller's deadline (see ScriptRunner) rather than a failure of Redis. */
export function isCutByDeadline(error: unknown): boolean {
  return error instanceof Error && cutCalls.has(error);
}

export function createScriptRunner(
  connection: Pick<RedisConnection, 'evalScript' | 'cluster'>,
  commandTimeout: number,
): ScriptRunner {
  const inFlight = new CallTimeouts(commandTimeout);
  // A Cluster runs each script in the form that checks its slot is settled (see LuaScript.cluster).
  const cluster = connection.cluster === true;
  return (script, keys, args, deadline) => {
    const call = connection.evalScript(cluster ? (script.cluster ?? script) : script, keys, args);
    const limit = deadline === undefined ? commandTimeout : Math.max(MIN_CALL_MS, deadline - now());
    // Cut sooner by a wait's own deadline: rare enough for a timer of its own. A deadline about
    // commandTimeout away (a release retried for commandTimeout, every unlock()) shares the one
    // timer: it is cut at most MIN_CALL_MS late, as any deadline may be.
    if (limit < commandTimeout - MIN_CALL_MS) return withTimeout(call, limit, () => cutByDeadline(script, limit));
    return inFlight.bound(call, () => noReply(script, commandTimeout));
  };
}

/**
 * Calls that all get the same time limit, in one deadline queue with one timer: a timer set and
 * cleared per call cost every lock()/unlock() pair about a sixth of latchkey's own JavaScript
 * (measured with a connection that answers at once).
 */
class CallTimeouts {
  readonly #pending = new DeadlineQueue<PendingCall>((time) => {
    for (let due = this.#pending.takeDue(time); due; due = this.#pending.takeDue(time)) due.fail?.();
  });

  constructor(private readonly ms: number) {}

  bound<T>(call: Promise<T>, onTimeout: () => Error): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const entry: PendingCall = { at: now() + this.ms, slot: -1, fail: () => reject(onTimeout()) };
      this.#pending.add(entry);
      call.then(
        (value) => {
          this.#settled(entry);
          resolve(value);
        },
        (error: unknown) => {
          this.#settled(entry);
          reject(error);
        },
      );
    });
  }

  #settled(entry: PendingCall): void {
    this.#pending.remove(entry);
    // Nothing reaches the call's promise from the queue any more (see DeadlineQueue: no tables).
    entry.fail = undefined;
  }
}

interface PendingCall extends Due {
  /** Rejects the call; undefined once it settled. */
  fail: (() => void) | undefined;
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
/** The longest pause retryPause() gives. */
export const MAX_RETRY_PAUSE_MS = 1_000;

export function retryPause(failures: number): number {
  return Math.min(MAX_RETRY_PAUSE_MS, 25 * 2 ** Math.min(failures, 6)) * (0.5 + Math.random() / 2);
}

/**
 * Runs a script that is safe to run twice (it gives the first run's outcome on a repeat) until its
 * outcome is known: a reply, or Redis' own error. A call whose reply was lost (timeout, dropped
 * connection) is sent again, after a short pause, until `until` (epoch ms) passes; then the last
 * RedisUnavailableError is thrown and the outcome stays unknown.
 */
export function runUntilKnown(
  run: ScriptRunner,
  script: LuaScript,
  keys: readonly string[],
  args: readonly ScriptArg[],
  until: number,
): Promise<ScriptReply> {
  // The first call is the usual last one: no retry loop is set up for it.
  return run(script, keys, args, until).catch((error: unknown) =>
    runAgainUntilKnown(run, script, keys, args, until, error),
  );
}

async function runAgainUntilKnown(
  run: ScriptRunner,
  script: LuaScript,
  keys: readonly string[],
  args: readonly ScriptArg[],
  until: number,
  firstError: unknown,
): Promise<ScriptReply> {
  let error = firstError;
  for (let failures = 0; ; failures++) {
    if (!(error instanceof RedisUnavailableError)) throw error;
    const pause = retryPause(failures);
    if (now() + pause >= until) throw error;
    await new Promise((resolve) => setTimeout(resolve, pause));
    try {
      return await run(script, keys, args, until);
    } catch (failure) {
      error = failure;
    }
  }
}
