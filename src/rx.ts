/**
 * `latchkey/rx`: the reactive style. `toRx(primitive)` mirrors a primitive's methods as cold RxJS 7
 * Observables. RxJS is an optional peer dependency: only this subpath imports it.
 * @module
 */
import { Observable } from 'rxjs';

/** A primitive's methods, each returning a cold Observable of what the method resolves with. */
export type RxStyle<T> = {
  readonly [K in keyof T as T[K] extends (...args: never[]) => unknown ? K : never]: T[K] extends (
    ...args: infer A
  ) => infer R
    ? (...args: A) => Observable<Awaited<R>>
    : never;
};

/** Methods that wait and take `{ signal }` in their options: unsubscribing aborts them. */
const WAITING_METHODS = new Set([
  'lock',
  'tryLock',
  'withLock',
  'acquire',
  'tryAcquire',
  'await',
  'lockAndGetToken',
  'tryLockAndGetToken',
]);

/**
 * Where a primitive's method takes its options when the caller passed none, for methods whose
 * options do not come first (a class may declare `static rxOptionsIndex = { acquire: 1 }`).
 */
function optionsIndex(target: object, method: string, args: readonly unknown[]): number {
  const declared = (target.constructor as { rxOptionsIndex?: Record<string, number> } | undefined)?.rxOptionsIndex;
  if (declared?.[method] !== undefined) return declared[method];
  const hole = args.indexOf(undefined);
  return hole === -1 ? args.length : hole;
}

function isOptionsObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** The arguments with `signal` merged into the options (combined with the caller's own signal). */
function withSignal(target: object, method: string, args: readonly unknown[], signal: AbortSignal): unknown[] {
  const copy = [...args];
  let index = copy.findIndex(isOptionsObject);
  if (index === -1) {
    index = optionsIndex(target, method, copy);
    if (copy[index] !== undefined) return copy; // not an options slot we understand: leave it alone
    copy[index] = {};
  }
  const options = copy[index] as Record<string, unknown>;
  const own = options.signal;
  if (own !== undefined && !(own instanceof AbortSignal)) return copy; // let the method refuse it
  copy[index] = { ...options, signal: own === undefined ? signal : AbortSignal.any([own, signal]) };
  return copy;
}

/** Every method name of `target` along its prototype chain (not accessors, not the constructor). */
function methodNames(target: object): string[] {
  const names = new Set<string>();
  for (
    let proto: object | null = target;
    proto && proto !== Object.prototype;
    proto = Object.getPrototypeOf(proto) as object | null
  ) {
    for (const name of Object.getOwnPropertyNames(proto)) {
      if (name === 'constructor' || name.startsWith('_')) continue;
      const descriptor = Object.getOwnPropertyDescriptor(proto, name);
      if (descriptor && typeof descriptor.value === 'function') names.add(name);
    }
  }
  return [...names];
}

function toObservable(target: Record<string, unknown>, method: string, args: readonly unknown[]): Observable<unknown> {
  return new Observable<unknown>((subscriber) => {
    const controller = new AbortController();
    let settled = false;
    const callArgs = WAITING_METHODS.has(method) ? withSignal(target, method, args, controller.signal) : [...args];
    let result: unknown;
    try {
      result = (target[method] as (...a: unknown[]) => unknown).apply(target, callArgs);
    } catch (error) {
      subscriber.error(error);
      return undefined;
    }
    Promise.resolve(result).then(
      (value) => {
        settled = true;
        subscriber.next(value);
        subscriber.complete();
      },
      (error: unknown) => {
        settled = true;
        subscriber.error(error);
      },
    );
    // Unsubscribing while the call is pending aborts a wait; a finished call is left alone.
    return () => {
      if (!settled) controller.abort(new DOMException('The subscriber unsubscribed', 'AbortError'));
    };
  });
}

/**
 * Mirrors any latchkey primitive (Lock, FencedLock, Semaphore, CountDownLatch, ...) as cold
 * Observables: each call runs only when subscribed, once per subscription, and emits the value
 * the Promise method resolves with (`void` methods emit `undefined`), then completes.
 * Unsubscribing while a waiting method (`lock`, `tryLock`, `acquire`, `tryAcquire`, `await`, ...)
 * is pending aborts the wait, leaving nothing held and no waiter behind.
 *
 * ```ts
 * import { toRx } from 'latchkey/rx';
 * toRx(locks.getLock('order:42')).tryLock({ waitTime: 1_000 }).subscribe((ok) => console.log(ok));
 * ```
 */
export function toRx<T extends object>(primitive: T): RxStyle<T> {
  if (typeof primitive !== 'object' || primitive === null) {
    throw new TypeError(
      `Expected \`primitive\` to be a latchkey primitive object, got ${primitive === null ? 'null' : typeof primitive}`,
    );
  }
  const target = primitive as unknown as Record<string, unknown>;
  const rx: Record<string, (...args: unknown[]) => Observable<unknown>> = {};
  for (const name of methodNames(primitive)) rx[name] = (...args) => toObservable(target, name, args);
  return Object.freeze(rx) as unknown as RxStyle<T>;
}
