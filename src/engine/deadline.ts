/** A call cut by a caller's deadline still gets this long, so that the last step of a wait can run. */
export const MIN_CALL_MS = 50;

/**
 * A timer may fire a millisecond before Date.now() reaches its end: cutting a call this much after
 * the deadline makes the caller always see the deadline passed, and report its own timeout rather
 * than an outage.
 */
export const DEADLINE_MARGIN_MS = 2;

/**
 * Settles like `promise`, or resolves `undefined` once `deadline` (epoch ms; at least MIN_CALL_MS
 * from now) has passed. A value that arrives late is handed to `onLate`, so that what it holds
 * (a subscription, a waiter) can be given back instead of leaking.
 */
export function beforeDeadline<T>(
  promise: Promise<T>,
  deadline: number | undefined,
  onLate: (value: T) => void,
): Promise<T | undefined> {
  if (deadline === undefined) return promise;
  return new Promise<T | undefined>((resolve, reject) => {
    let late = false;
    const timer = setTimeout(
      () => {
        late = true;
        resolve(undefined);
      },
      Math.max(MIN_CALL_MS, deadline - Date.now() + DEADLINE_MARGIN_MS),
    );
    promise.then(
      (value) => {
        clearTimeout(timer);
        if (late) onLate(value);
        else resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        if (!late) reject(error);
      },
    );
  });
}
