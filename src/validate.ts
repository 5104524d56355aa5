/**
 * Argument checks. Each throws a TypeError or RangeError whose message names the argument, the
 * rule and the value received, so that bad input never reaches Redis.
 */

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

/** A finite duration in milliseconds, >= 0 (or > 0 when `positive`). */
export function checkDuration(value: unknown, argument: string, positive = false): number {
  if (typeof value !== 'number') {
    throw new TypeError(`Expected \`${argument}\` to be a number of milliseconds, got ${describe(value)}`);
  }
  if (!Number.isFinite(value) || value < 0 || (positive && value === 0)) {
    const rule = positive ? 'a finite number > 0' : 'a finite number >= 0';
    throw new RangeError(`Expected \`${argument}\` to be ${rule} (milliseconds), got ${describe(value)}`);
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

/** A plain options object or undefined. */
export function checkOptions<T extends object>(value: unknown, argument = 'options'): Partial<T> {
  if (value === undefined) return {};
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new TypeError(`Expected \`${argument}\` to be an object, got ${describe(value)}`);
  }
  return value;
}

/** A function. */
export function checkFunction(value: unknown, argument: string): void {
  if (typeof value !== 'function') {
    throw new TypeError(`Expected \`${argument}\` to be a function, got ${describe(value)}`);
  }
}
