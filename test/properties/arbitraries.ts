import fc from 'fast-check';

/**
 * Values that are not valid for an argument, by docs/guarantees.md (3.11 Durations): durations and
 * counts are integers (safe integers: a larger number is not a count of milliseconds any Redis
 * command takes), names are non-empty strings, options are plain objects, signals AbortSignals.
 * `undefined` is never generated: leaving an option out is always allowed.
 */
const notNumber = fc.oneof(
  fc.string(),
  fc.boolean(),
  fc.constant(null),
  fc.bigInt(),
  fc.array(fc.integer(), { maxLength: 2 }),
  fc.object({ maxDepth: 1 }),
);

const nonInteger = fc
  .double({ min: -1e9, max: 1e9, noNaN: true, noDefaultInfinity: true })
  .filter((x) => !Number.isInteger(x));

const notSafe = fc.oneof(
  fc.constantFrom(Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, 2 ** 53, 1e21, Number.MAX_VALUE),
  fc.double({ min: 2 ** 53, max: 1e300, noNaN: true }),
);

/** Any duration a caller may not pass (`zeroOk`: 0 is allowed, as for a waitTime). */
export function badDuration(zeroOk: boolean): fc.Arbitrary<unknown> {
  const negative = fc.integer({ min: -(2 ** 31), max: -1 });
  return fc.oneof(notNumber, nonInteger, notSafe, negative, ...(zeroOk ? [] : [fc.constant(0)]));
}

/** Integer counts below `min` or not integers at all. */
export function badCount(min: number): fc.Arbitrary<unknown> {
  const below =
    min <= -Number.MAX_SAFE_INTEGER ? [] : [fc.integer({ min: Math.max(-(2 ** 31), min - 1000), max: min - 1 })];
  return fc.oneof(notNumber, nonInteger, notSafe, ...below);
}

export const badName: fc.Arbitrary<unknown> = fc.oneof(
  fc.constant(''),
  fc.integer(),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.string(), { maxLength: 2 }),
  fc.object({ maxDepth: 1 }),
);

export const badSignal: fc.Arbitrary<unknown> = fc.oneof(
  fc.string(),
  fc.integer(),
  fc.boolean(),
  fc.constant(null),
  fc.object({ maxDepth: 1 }),
  fc.constant(new AbortController()),
);

export const badOptions: fc.Arbitrary<unknown> = fc.oneof(
  fc.string({ minLength: 1 }),
  fc.integer(),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.integer(), { minLength: 1, maxLength: 2 }),
);

export const badFunction: fc.Arbitrary<unknown> = fc.oneof(
  fc.string(),
  fc.integer(),
  fc.constant(null),
  fc.object({ maxDepth: 1 }),
  fc.constant(Promise.resolve()),
);
