/**
 * Timers that may run past Node's 2^31 - 1 ms limit, abortable sleeps, and timers that never keep
 * the process alive.
 */
import { now } from '../clock.js';

/** Node's timers fire at once for any delay above this (2^31 - 1 ms, about 24.8 days). */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** A timer that may run longer than Node's limit; `cancel()` stops it. */
export interface LongTimer {
  cancel(): void;
}

/**
 * Calls `fn` once `ms` have passed, chaining Node timers past their 2^31 - 1 ms limit. Unless
 * `keepAlive`, the timer does not keep the process alive: latchkey's own timers (lease ends,
 * renewals) serve the user's work, they are not work.
 */
export function setLongTimeout(fn: () => void, ms: number, keepAlive = false): LongTimer {
  const at = now() + ms;
  let timer: NodeJS.Timeout;
  const arm = (): void => {
    const left = at - now();
    timer = setTimeout(left > MAX_TIMER_MS ? arm : fn, Math.min(Math.max(0, left), MAX_TIMER_MS));
    if (!keepAlive) timer.unref();
  };
  arm();
  return { cancel: () => clearTimeout(timer) };
}

/** Resolves after `ms`, or rejects with the reason of the first of `signals` to abort, at once. */
export function sleep(ms: number, ...signals: readonly (AbortSignal | undefined)[]): Promise<void> {
  let timer: LongTimer | undefined;
  // Someone waits on it: this timer keeps the process alive, until an abort cancels it.
  const slept = new Promise<void>((resolve) => (timer = setLongTimeout(resolve, ms, true)));
  const ended = abortable(slept, ...signals);
  ended.catch(() => timer?.cancel());
  return ended;
}

/** Settles like `promise`, or rejects with the reason of the first of `signals` to abort. */
export function abortable<T>(promise: Promise<T>, ...signals: readonly (AbortSignal | undefined)[]): Promise<T> {
  const given = signals.filter((signal): signal is AbortSignal => signal !== undefined);
  const aborted = given.find((signal) => signal.aborted);
  if (aborted) return Promise.reject(aborted.reason as Error);
  return new Promise((resolve, reject) => {
    const onAbort = (event: Event): void => finish(() => reject((event.target as AbortSignal).reason));
    function finish(settle: () => void): void {
      for (const signal of given) signal.removeEventListener('abort', onAbort);
      settle();
    }
    for (const signal of given) signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => finish(() => resolve(value)),
      (error: unknown) => finish(() => reject(error)),
    );
  });
}
