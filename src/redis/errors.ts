import { RedisUnavailableError } from '../errors.js';
import type { ScriptReply } from './connection.js';
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

/**
 * What to do when EVALSHA failed: when the server does not know the script (NOSCRIPT: restarted,
 * flushed, or a new Cluster node) run it by EVAL, else reject. Errors come out classified. Called
 * only on an error, so that a call that succeeds pays for nothing of this.
 */
export async function retryOnNoScript(
  error: unknown,
  scriptName: string,
  evalSource: () => Promise<unknown>,
): Promise<ScriptReply> {
  try {
    if (!isNoScriptError(error)) throw error;
    return (await evalSource()) as ScriptReply;
  } catch (failure) {
    throw classifyClientError(failure, `script ${scriptName}`);
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
