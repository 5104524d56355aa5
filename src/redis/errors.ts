import { RedisUnavailableError } from '../errors.js';
import type { LuaScript, ScriptArg, ScriptReply } from './connection.js';
import type { Subscriptions } from './subscriptions.js';

/**
 * Decides whether a client error is Redis' own reply (kept as is: it says what is wrong with the
 * data) or a failure to talk to Redis (wrapped in RedisUnavailableError with the original as cause).
 */
const REPLY_ERRORS = new Set(['ReplyError', 'ErrorReply', 'SimpleError', 'BlobError']);

export function classifyClientError(error: unknown, what: string): Error {
  // ioredis names its reply errors ReplyError; node-redis uses classes ErrorReply (v4) / SimpleError (v5).
  if (error instanceof Error && [error.name, error.constructor.name].some((name) => REPLY_ERRORS.has(name))) {
    return error;
  }
  const detail = error instanceof Error ? error.message : String(error);
  return new RedisUnavailableError(`Redis is unavailable (${what}): ${detail}`, { cause: error });
}

function isNoScriptError(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith('NOSCRIPT');
}

/** How one client sends a script: by its SHA1, and by its source (after NOSCRIPT). */
export interface ScriptSender {
  evalsha(script: LuaScript, keys: readonly string[], args: readonly ScriptArg[]): Promise<unknown>;
  eval(script: LuaScript, keys: readonly string[], args: readonly ScriptArg[]): Promise<unknown>;
}

/**
 * EVALSHA, then EVAL when the server does not know the script (NOSCRIPT: restarted, flushed, or
 * a new Cluster node). Errors come out classified. A reply passes through untouched (no function
 * of ours runs on it): the only closure made per call is the error handler.
 */
export function evalWithFallback(
  sender: ScriptSender,
  script: LuaScript,
  keys: readonly string[],
  args: readonly ScriptArg[],
): Promise<ScriptReply> {
  let reply: Promise<unknown>;
  try {
    reply = sender.evalsha(script, keys, args);
  } catch (error) {
    reply = Promise.reject(error);
  }
  return reply.then<ScriptReply, ScriptReply>(undefined, (error: unknown) =>
    retryOnNoScript(error, sender, script, keys, args),
  );
}

async function retryOnNoScript(
  error: unknown,
  sender: ScriptSender,
  script: LuaScript,
  keys: readonly string[],
  args: readonly ScriptArg[],
): Promise<ScriptReply> {
  try {
    if (!isNoScriptError(error)) throw error;
    return (await sender.eval(script, keys, args)) as ScriptReply;
  } catch (failure) {
    throw classifyClientError(failure, `script ${script.name}`);
  }
}

/** Adds a listener through `subscriptions`, classifying a failure to subscribe. */
export async function subscribeClassified(
  subscriptions: Subscriptions,
  channel: string,
  listener: (message: string) => void,
): Promise<() => Promise<void>> {
  try {
    return await subscriptions.add(channel, listener);
  } catch (error) {
    throw classifyClientError(error, `subscribe ${channel}`);
  }
}
