/**
 * Argument checks. Each throws a TypeError or RangeError whose message names the argument, the
 * rule and the value received, so that bad input never reaches Redis.
 */

/**
 * The longest duration accepted, in ms (2^52, about 142,000 years): `Date.now()` plus it, and a
 * Redis server clock plus it inside a script, stay exact integers. Node's timers stop at 2^31 - 1
 * ms (about 24.8 days); latchkey chains them, so every accepted duration works.
 */
export const MAX_DURATION_MS = 2 ** 52;

function describe(value: unknown): string {
  if (typeof value === 'string') return `${JSON.stringify(value)} (string)`;
  if (typeof value === 'number' || typeof value === 'bigint') return `${String(value)} (${typeof value})`;
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return `a value of type ${typeof value}`;
}

/** A non-empty string (lock names, key prefixes). */
export function checkName(value: unknown, argument: string): string {
  if (typeof value !== 'string') {
    throw new TypeError(`Expected \`${argument}\` to be a non-empty string, got ${describe(value)}`);
  }
  if (value.length === 0) throw new RangeError(`Expected \`${argument}\` to be a non-empty string, got ""`);
  return value;
}

/**
 * The shortest lease a lock accepts, in ms. A holder may count on its lock only until its lease,
 * measured from before the call that set it, minus an allowance for the two clocks' drift (2 ms
 * and 1%): a lease of 1 or 2 ms is over before any reply can arrive, so such a lock could never be
 * granted. 10 ms leaves room for a round trip on a local network.
 */
export const MIN_LEASE_MS = 10;

/** A whole number of milliseconds from 0 (or 1 when `positive`) to MAX_DURATION_MS. */
export function checkDuration(value: unknown, argument: string, positive = false): number {
  return checkMilliseconds(value, argument, positive ? 1 : 0);
}

/** A lock's lease (leaseTime, watchdogTimeout, maxLeaseTime): from MIN_LEASE_MS to MAX_DURATION_MS. */
export function checkLease(value: unknown, argument: string): number {
  return checkMilliseconds(value, argument, MIN_LEASE_MS);
}

/** Like checkLease, but `undefined` is allowed and means "not given". */
export function checkOptionalLease(value: unknown, argument: string): number | undefined {
  return value === undefined ? undefined : checkLease(value, argument);
}

function checkMilliseconds(value: unknown, argument: string, min: number): number {
  if (typeof value !== 'number') {
    throw new TypeError(`Expected \`${argument}\` to be a number of milliseconds, got ${describe(value)}`);
  }
  if (!Number.isInteger(value) || value < min || value > MAX_DURATION_MS) {
    throw new RangeError(
      `Expected \`${argument}\` to be a whole number of milliseconds from ${min} to 2^52, got ${describe(value)}`,
    );
  }
  return value;
}

/** Like checkDuration, but `undefined` is allowed and means "not given". */
export function checkOptionalDuration(value: unknown, argument: string, positive = false): number | undefined {
  return value === undefined ? undefined : checkDuration(value, argument, positive);
}

/** An integer >= `min`. */
export function checkInteger(value: unknown, argument: string, min: number): number {
  if (typeof value !== 'number') {
    throw new TypeError(`Expected \`${argument}\` to be an integer, got ${describe(value)}`);
  }
  if (!Number.isSafeInteger(value) || value < min) {
    throw new RangeError(`Expected \`${argument}\` to be an integer >= ${min}, got ${describe(value)}`);
  }
  return value;
}

/** An AbortSignal or undefined. */
export function checkSignal(value: unknown, argument = 'signal'): AbortSignal | undefined {
  if (value === undefined) return undefined;
  if (!(value instanceof AbortSignal)) {
    throw new TypeError(`Expected \`${argument}\` to be an AbortSignal, got ${describe(value)}`);
  }
  return value;
}

/**
 * A plain options object (or undefined) whose keys are all in `known`: a misspelled option is
 * refused rather than silently ignored.
 */
export function checkOptions<T extends object>(
  value: unknown,
  known: readonly (keyof T & string)[],
  argument = 'options',
): Partial<T> {
  if (value === undefined) return {};
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new TypeError(`Expected \`${argument}\` to be an object, got ${describe(value)}`);
  }
  for (const key of Object.keys(value)) {
    if (!(known as readonly string[]).includes(key)) {
      throw new TypeError(`Unknown option \`${argument}.${key}\`; expected one of: ${known.join(', ')}`);
    }
  }
  return value;
}

/** One of `choices`. */
export function checkChoice<T extends string>(value: unknown, argument: string, choices: readonly T[]): T {
  if (!(choices as readonly unknown[]).includes(value)) {
    const expected = choices.map((choice) => `'${choice}'`).join(' or ');
    throw new TypeError(`Expected \`${argument}\` to be ${expected}, got ${describe(value)}`);
  }
  return value as T;
}

/** A function. */
export function checkFunction(value: unknown, argument: string): void {
  if (typeof value !== 'function') {
    throw new TypeError(`Expected \`${argument}\` to be a function, got ${describe(value)}`);
  }
}
