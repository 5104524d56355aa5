import { RedisUnavailableError } from '../errors.js';

/**
 * Decides whether a client error is Redis' own reply (kept as is: it says what is wrong with the
 * data) or a failure to talk to Redis (wrapped in RedisUnavailableError with the original as cause).
 */
export function classifyClientError(error: unknown, what: string): Error {
  if (error instanceof Error && /^(ReplyError|ErrorReply|SimpleError|BlobError)$/.test(error.name)) {
    return error;
  }
  const detail = error instanceof Error ? error.message : String(error);
  return new RedisUnavailableError(`Redis is unavailable (${what}): ${detail}`, { cause: error });
}

export function isNoScriptError(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith('NOSCRIPT');
}
