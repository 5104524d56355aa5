import { RedisUnavailableError } from '../errors.js';

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

export function isNoScriptError(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith('NOSCRIPT');
}
