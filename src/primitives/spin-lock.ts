/**
 * SpinLock (getSpinLock): the re-entrant lock, waited for by polling with exponential backoff and
 * jitter instead of pub/sub.
 */
import type { ClientContext } from '../context.js';
import { KeyLock } from '../engine/key-lock.js';
import { LockHandle } from '../engine/lock-handle.js';
import type { Lock } from '../lock.js';
import { checkDuration, checkOptions } from '../validate.js';
import { lockBackend } from './reentrant-lock.js';

/** How a SpinLock spaces its attempts: exponential backoff with jitter. */
export interface SpinBackoff {
  /**
   * Pause after the first failed attempt, in ms.
   * @default 10
   */
  initialDelay?: number;
  /**
   * Longest pause between two attempts, in ms.
   * @default 500
   */
  maxDelay?: number;
  /**
   * Each pause is the previous one times this (>= 1; 1 is a fixed interval).
   * @default 2
   */
  multiplier?: number;
  /**
   * Share of each pause drawn at random, 0..1: a pause of `d` becomes a value in
   * `[d * (1 - jitter), d]`, so waiters that failed together do not retry together.
   * @default 0.5
   */
  jitter?: number;
}

/** Default backoff of `getSpinLock()`. */
export const SPIN_BACKOFF_DEFAULTS: Readonly<Required<SpinBackoff>> = Object.freeze({
  initialDelay: 10,
  maxDelay: 500,
  multiplier: 2,
  jitter: 0.5,
});

/** Validates a backoff argument (TypeError / RangeError naming the field) and fills in defaults. */
export function resolveBackoff(backoff: unknown): Readonly<Required<SpinBackoff>> {
  const given = checkOptions<SpinBackoff>(backoff, ['initialDelay', 'maxDelay', 'multiplier', 'jitter'], 'backoff');
  const initialDelay = checkDuration(
    given.initialDelay === undefined ? SPIN_BACKOFF_DEFAULTS.initialDelay : given.initialDelay,
    'backoff.initialDelay',
    true,
  );
  const maxDelay = checkDuration(
    given.maxDelay === undefined ? Math.max(initialDelay, SPIN_BACKOFF_DEFAULTS.maxDelay) : given.maxDelay,
    'backoff.maxDelay',
    true,
  );
  if (maxDelay < initialDelay) {
    throw new RangeError(
      `Expected \`backoff.maxDelay\` to be >= backoff.initialDelay (${initialDelay}), got ${maxDelay} (number)`,
    );
  }
  const multiplier = checkNumberIn(
    given.multiplier === undefined ? SPIN_BACKOFF_DEFAULTS.multiplier : given.multiplier,
    'backoff.multiplier',
    1,
    1_000,
  );
  const jitter = checkNumberIn(
    given.jitter === undefined ? SPIN_BACKOFF_DEFAULTS.jitter : given.jitter,
    'backoff.jitter',
    0,
    1,
  );
  return Object.freeze({ initialDelay, maxDelay, multiplier, jitter });
}

function checkNumberIn(value: unknown, argument: string, min: number, max: number): number {
  if (typeof value !== 'number')
    throw new TypeError(`Expected \`${argument}\` to be a number, got a value of type ${typeof value}`);
  if (!(value >= min && value <= max)) {
    throw new RangeError(
      `Expected \`${argument}\` to be a number from ${min} to ${max}, got ${String(value)} (number)`,
    );
  }
  return value;
}

/** The pause before retry number `retry` (0-based), jittered by `random()` in [0, 1). */
export function backoffDelay(
  backoff: Readonly<Required<SpinBackoff>>,
  retry: number,
  random: () => number = Math.random,
): number {
  const full = Math.min(backoff.maxDelay, backoff.initialDelay * backoff.multiplier ** retry);
  return full * (1 - backoff.jitter * random());
}

/**
 * Creates the SpinLock returned by `LockClient.getSpinLock()`: the re-entrant lock (same key, so it
 * excludes `getLock()` of the same name) whose waiters poll with backoff instead of subscribing,
 * never sleeping past the holder's lease (the moment the lock may be free) nor past the caller's
 * waitTime.
 */
export function createSpinLock(ctx: ClientContext, name: string, backoff: Readonly<Required<SpinBackoff>>): Lock {
  const pause = (retry: number): number => backoffDelay(backoff, retry);
  return new LockHandle(new KeyLock(ctx, lockBackend(ctx, name, 'spin-lock', { queue: false, pause })));
}
