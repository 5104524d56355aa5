/**
 * Sending a script (EVALSHA, then EVAL after NOSCRIPT) and telling Redis' reply errors from
 * failures to reach it, and refused commands from both.
 */
import { CommandRefusedError, RedisUnavailableError } from '../errors.js';
import type { ChannelListener, LuaScript, ScriptArg, ScriptReply } from './connection.js';
import type { Subscriptions } from './subscriptions.js';

/** Class names clients give Redis' own error replies: ioredis ReplyError, node-redis ErrorReply (v4) / SimpleError (v5). */
const REPLY_ERRORS = new Set(['ReplyError', 'ErrorReply', 'SimpleError', 'BlobError']);

/**
 * Replies that say the server cannot serve the call now, not that the call is wrong: a Cluster
 * slot moving or failing over, a replica promoted or not yet, a server loading or busy. A wait
 * rides them out like a lost connection.
 */
const PASSING_REPLIES = /^(TRYAGAIN|CLUSTERDOWN|MOVED|ASK|LOADING|MASTERDOWN|READONLY|BUSY|NOREPLICAS|UNBLOCKED)\b/;

/** Whether a client's error is Redis' own reply, by the class names clients give them. */
export type IsReplyError = (error: Error) => boolean;
const byClassName: IsReplyError = (error) =>
  [error.name, error.constructor.name].some((name) => REPLY_ERRORS.has(name));

/**
 * Decides whether a client error is Redis' own reply about the call (kept as is: it says what is
 * wrong) or a failure to reach a server that can answer (wrapped in RedisUnavailableError with the
 * original as cause). `isReply` tells a reply for clients whose class names do not (GLIDE, Bun).
 */
export function classifyClientError(error: unknown, what: string, isReply: IsReplyError = byClassName): Error {
  if (error instanceof RedisUnavailableError) return error;
  if (error instanceof Error && isReply(error) && !PASSING_REPLIES.test(error.message)) return error;
  const detail = error instanceof Error ? error.message : String(error);
  return new RedisUnavailableError(`Redis is unavailable (${what}): ${detail}`, { cause: error });
}

/**
 * A failed command, classified: Redis' own error reply to it, other than one that says "not now"
 * (see PASSING_REPLIES), means the server refuses it (an ACL without it, a managed service that
 * does not offer it) and will again: a CommandRefusedError, whose message adds `consequence`.
 * Anything else comes out as `classifyClientError` makes it.
 */
export function classifyRefusal(
  error: unknown,
  command: string,
  consequence = '',
  isReply: IsReplyError = byClassName,
): Error {
  const classified = classifyClientError(error, command, isReply);
  if (classified instanceof RedisUnavailableError || classified instanceof CommandRefusedError) return classified;
  const message = `Redis refused ${command} (${classified.message})${consequence && `: ${consequence}`}`;
  return new CommandRefusedError(command, message, { cause: error });
}

/** What a refused WAIT means, and the fix. */
export const WAIT_REFUSED =
  "the replicaAcks option needs it, so no acquisition can count. Allow WAIT for latchkey's Redis user, or leave replicaAcks out.";

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
 * a new Cluster node). Errors come out classified.
 */
export function evalWithFallback(
  sender: ScriptSender,
  script: LuaScript,
  keys: readonly string[],
  args: readonly ScriptArg[],
  isReply?: IsReplyError,
): Promise<ScriptReply> {
  // A reply passes through untouched: every lock() and unlock() takes this path twice.
  return attempt(() => sender.evalsha(script, keys, args)).then(undefined, (error: unknown) => {
    if (!isNoScriptError(error)) throw classifyClientError(error, `script ${script.name}`, isReply);
    return attempt(() => sender.eval(script, keys, args)).then(undefined, (failure: unknown) => {
      throw classifyClientError(failure, `script ${script.name}`, isReply);
    });
  });
}

/** `send()`, with a synchronous throw (a client refusing the call outright) as a rejection. */
function attempt(send: () => Promise<unknown>): Promise<unknown> {
  try {
    return send();
  } catch (error) {
    return Promise.reject(error);
  }
}

/** Adds a listener through `subscriptions`, classifying a failure to subscribe. */
export async function subscribeClassified(
  subscriptions: Subscriptions,
  channel: string,
  listener: ChannelListener,
): Promise<() => Promise<void>> {
  try {
    return await subscriptions.add(channel, listener);
  } catch (error) {
    throw classifyClientError(error, `subscribe ${channel}`);
  }
}

/** What follows the script in EVALSHA / EVAL: the key count, the keys, the arguments as strings. */
export function commandTail(keys: readonly string[], args: readonly ScriptArg[]): string[] {
  return [String(keys.length), ...keys, ...args.map(String)];
}
