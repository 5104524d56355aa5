/**
 * StripedLock (getStripedLock): a fixed set of plain locks and a stable hash from any key to one.
 */
import { createHash } from 'node:crypto';
import type { ClientContext } from '../context.js';
import type { Lock } from '../lock.js';
import { checkInteger, checkName } from '../validate.js';
import { createLock } from './reentrant-lock.js';

/**
 * Lock striping: a fixed set of `stripes` plain locks, and a stable hash that maps any key onto
 * one of them. Work on keys of different stripes never contends, while the number of locks stays
 * bounded however many keys there are. Two keys may share a stripe (and then exclude each other).
 */
export interface StripedLock {
  /** The name the stripes are derived from. */
  readonly name: string;
  /** How many locks the keys are spread over. */
  readonly stripes: number;
  /**
   * The stripe of `key`, in `[0, stripes)`: the first 48 bits of the SHA-256 of its UTF-8 bytes,
   * modulo `stripes`. The same in every process, on every platform and version.
   */
  indexOf(key: string): number;
  /**
   * The lock guarding `key`: the plain re-entrant lock named `<name>:<index>`. Each call returns a
   * new handle (its own owner), exactly like `getLock()` does.
   */
  get(key: string): Lock;
}

/** Creates the striped lock returned by `LockClient.getStripedLock()` (`name` already checked). */
export function createStripedLock(ctx: ClientContext, name: string, stripes: number): StripedLock {
  checkInteger(stripes, 'stripes', 1);
  const indexOf = (key: string): number => {
    checkName(key, 'key');
    // 48 bits keep the modulo bias below 2^-20 for any stripe count up to 2^28.
    return createHash('sha256').update(key, 'utf8').digest().readUIntBE(0, 6) % stripes;
  };
  return Object.freeze({
    name,
    stripes,
    indexOf,
    get: (key: string): Lock => createLock(ctx, `${name}:${indexOf(key)}`),
  });
}
