import fc from 'fast-check';
import type { Redis } from 'ioredis';
import { LockClient, type Lock } from '../../src/index.js';
import { toRx } from '../../src/rx.js';
import { badCount, badDuration, badFunction, badName, badOptions, badSignal } from './arbitraries.js';

/** One argument of one public entry point, called with a bad value in that argument only. */
export interface EntryPoint {
  /** e.g. `Lock.tryLock({ waitTime })`. */
  readonly name: string;
  /** The argument the error message must name. */
  readonly argument: string;
  readonly bad: fc.Arbitrary<unknown>;
  /** Synchronous API (constructor, factories): throws. Otherwise the returned promise rejects. */
  readonly sync?: boolean;
  /** `n` makes names unique per call, so that a bad value that is accepted holds nothing shared. */
  call(locks: LockClient, bad: unknown, n: number): unknown;
}

const noop = (): void => undefined;
/** Passes any value where the types want another: these calls are what a JavaScript caller could write. */
const any = (value: unknown): never => value as never;

/** The lock kinds that share the Lock API, each made fresh for a call. */
const LOCKS: Readonly<Record<string, (l: LockClient, n: number) => Lock>> = {
  Lock: (l, n) => l.getLock(`bad-${n}`),
  FairLock: (l, n) => l.getFairLock(`bad-${n}`),
  SpinLock: (l, n) => l.getSpinLock(`bad-${n}`),
  FencedLock: (l, n) => l.getFencedLock(`bad-${n}`),
  ReadLock: (l, n) => l.getReadWriteLock(`bad-${n}`).readLock(),
  WriteLock: (l, n) => l.getReadWriteLock(`bad-${n}`).writeLock(),
  MultiLock: (l, n) => l.getMultiLock(l.getLock(`bad-a-${n}`), l.getLock(`bad-b-${n}`)),
  RedLock: (l, n) => l.getRedLock(l.getLock(`bad-a-${n}`), l.getLock(`bad-b-${n}`), l.getLock(`bad-c-${n}`)),
};

function lockEntries(kind: string, make: (l: LockClient, n: number) => Lock): EntryPoint[] {
  const lease = badDuration(false);
  const wait = badDuration(true);
  const entry = (
    name: string,
    argument: string,
    bad: fc.Arbitrary<unknown>,
    call: (lock: Lock, v: unknown) => unknown,
  ) => ({
    name: `${kind}.${name}`,
    argument,
    bad,
    call: (l: LockClient, v: unknown, n: number) => call(make(l, n), v),
  });
  return [
    entry('lock({ leaseTime })', 'leaseTime', lease, (k, v) => k.lock({ leaseTime: any(v) })),
    entry('lock({ signal })', 'signal', badSignal, (k, v) => k.lock({ signal: any(v) })),
    entry('lock(options)', 'options', badOptions, (k, v) => k.lock(any(v))),
    entry('tryLock({ waitTime })', 'waitTime', wait, (k, v) => k.tryLock({ waitTime: any(v) })),
    entry('tryLock({ leaseTime })', 'leaseTime', lease, (k, v) => k.tryLock({ leaseTime: any(v) })),
    entry('tryLock({ signal })', 'signal', badSignal, (k, v) => k.tryLock({ signal: any(v) })),
    entry('tryLock(options)', 'options', badOptions, (k, v) => k.tryLock(any(v))),
    entry('withLock(fn)', 'fn', badFunction, (k, v) => k.withLock(any(v))),
    entry('withLock(fn, { waitTime })', 'waitTime', wait, (k, v) => k.withLock(noop, { waitTime: any(v) })),
    entry('withLock(fn, { leaseTime })', 'leaseTime', lease, (k, v) => k.withLock(noop, { leaseTime: any(v) })),
    entry('withLock(fn, options)', 'options', badOptions, (k, v) => k.withLock(noop, any(v))),
    entry('acquire({ waitTime })', 'waitTime', wait, (k, v) => k.acquire({ waitTime: any(v) })),
    entry('acquire({ leaseTime })', 'leaseTime', lease, (k, v) => k.acquire({ leaseTime: any(v) })),
    entry('acquire({ signal })', 'signal', badSignal, (k, v) => k.acquire({ signal: any(v) })),
  ];
}

function clientEntries(redis: Redis): EntryPoint[] {
  const option = (name: string, bad: fc.Arbitrary<unknown>): EntryPoint => ({
    name: `new LockClient(redis, { ${name} })`,
    argument: name,
    bad,
    sync: true,
    call: (_l, v) => new LockClient(redis, { [name]: v }),
  });
  const factory = (name: string, call: (l: LockClient, v: unknown) => unknown, argument = 'name', bad = badName) => ({
    name: `LockClient.${name}`,
    argument,
    bad,
    sync: true,
    call,
  });
  return [
    option('keyPrefix', badName),
    option('watchdogTimeout', badDuration(false)),
    option('fairWaiterTimeout', badDuration(false)),
    option('commandTimeout', badDuration(false)),
    option('maxLeaseTime', badDuration(false)),
    option('replicaAcks', badCount(0)),
    option('replicaAckTimeout', badDuration(false)),
    {
      name: 'new LockClient(redis)',
      argument: 'redis',
      bad: badFunction,
      sync: true,
      call: (_l, v) => new LockClient(any(v)),
    },
    {
      name: 'toRx(primitive)',
      argument: 'primitive',
      bad: fc.oneof(fc.string(), fc.integer(), fc.boolean(), fc.constant(null)),
      sync: true,
      call: (_l, v) => toRx(any(v)),
    },
    {
      name: 'new LockClient(redis, options)',
      argument: 'options',
      bad: badOptions,
      sync: true,
      call: (_l, v) => new LockClient(redis, any(v)),
    },
    factory('getLock(name)', (l, v) => l.getLock(any(v))),
    factory('getFairLock(name)', (l, v) => l.getFairLock(any(v))),
    factory('getSpinLock(name)', (l, v) => l.getSpinLock(any(v))),
    factory('getFencedLock(name)', (l, v) => l.getFencedLock(any(v))),
    factory('getReadWriteLock(name)', (l, v) => l.getReadWriteLock(any(v))),
    factory('getSemaphore(name)', (l, v) => l.getSemaphore(any(v))),
    factory('getPermitExpirableSemaphore(name)', (l, v) => l.getPermitExpirableSemaphore(any(v))),
    factory('getCountDownLatch(name)', (l, v) => l.getCountDownLatch(any(v))),
    factory('getStripedLock(name, stripes)', (l, v) => l.getStripedLock(any(v), 4)),
    factory('getStripedLock(name, stripes) stripes', (l, v) => l.getStripedLock('s', any(v)), 'stripes', badCount(1)),
    factory('getStripedLock(..).get(key)', (l, v) => l.getStripedLock('s', 4).get(any(v)), 'key', badName),
    factory('getSpinLock(name, backoff)', (l, v) => l.getSpinLock('s', any(v)), 'backoff', badOptions),
    factory(
      'getSpinLock(name, { initialDelay })',
      (l, v) => l.getSpinLock('s', { initialDelay: any(v) }),
      'backoff.initialDelay',
      badDuration(false),
    ),
    factory(
      'getSpinLock(name, { maxDelay })',
      (l, v) => l.getSpinLock('s', { maxDelay: any(v) }),
      'backoff.maxDelay',
      badDuration(false),
    ),
    factory('getMultiLock(...locks)', (l, v) => l.getMultiLock(l.getLock('m'), any(v)), 'locks', badFunction),
    factory('getRedLock(...locks)', (l, v) => l.getRedLock(l.getLock('r'), any(v)), 'locks', badFunction),
    { name: 'LockClient.scope(fn)', argument: 'fn', bad: badFunction, call: (l, v) => l.scope(any(v)) },
  ];
}

function semaphoreEntries(): EntryPoint[] {
  const sem = (l: LockClient, n: number) => l.getSemaphore(`bad-${n}`);
  const pes = (l: LockClient, n: number) => l.getPermitExpirableSemaphore(`bad-${n}`);
  const latch = (l: LockClient, n: number) => l.getCountDownLatch(`bad-${n}`);
  const e = (name: string, argument: string, bad: fc.Arbitrary<unknown>, call: EntryPoint['call']): EntryPoint => ({
    name,
    argument,
    bad,
    call,
  });
  return [
    e('Semaphore.trySetPermits(permits)', 'permits', badCount(0), (l, v, n) => sem(l, n).trySetPermits(any(v))),
    e('Semaphore.addPermits(permits)', 'permits', badCount(-Number.MAX_SAFE_INTEGER), (l, v, n) =>
      sem(l, n).addPermits(any(v)),
    ),
    e('Semaphore.acquire(permits)', 'permits', badCount(1), (l, v, n) => sem(l, n).acquire(any(v))),
    e('Semaphore.acquire(1, { signal })', 'signal', badSignal, (l, v, n) => sem(l, n).acquire(1, { signal: any(v) })),
    e('Semaphore.acquire(1, options)', 'options', badOptions, (l, v, n) => sem(l, n).acquire(1, any(v))),
    e('Semaphore.tryAcquire({ permits })', 'permits', badCount(1), (l, v, n) =>
      sem(l, n).tryAcquire({ permits: any(v) }),
    ),
    e('Semaphore.tryAcquire({ waitTime })', 'waitTime', badDuration(true), (l, v, n) =>
      sem(l, n).tryAcquire({ waitTime: any(v) }),
    ),
    e('Semaphore.tryAcquire(options)', 'options', badOptions, (l, v, n) => sem(l, n).tryAcquire(any(v))),
    e('Semaphore.release(permits)', 'permits', badCount(1), (l, v, n) => sem(l, n).release(any(v))),
    e('PermitExpirableSemaphore.trySetPermits(permits)', 'permits', badCount(0), (l, v, n) =>
      pes(l, n).trySetPermits(any(v)),
    ),
    e('PermitExpirableSemaphore.acquire({ leaseTime })', 'leaseTime', badDuration(false), (l, v, n) =>
      pes(l, n).acquire({ leaseTime: any(v) }),
    ),
    e('PermitExpirableSemaphore.tryAcquire({ waitTime })', 'waitTime', badDuration(true), (l, v, n) =>
      pes(l, n).tryAcquire({ waitTime: any(v) }),
    ),
    e('PermitExpirableSemaphore.tryAcquire({ leaseTime })', 'leaseTime', badDuration(false), (l, v, n) =>
      pes(l, n).tryAcquire({ leaseTime: any(v) }),
    ),
    e('PermitExpirableSemaphore.release(permitId)', 'permitId', badName, (l, v, n) => pes(l, n).release(any(v))),
    e('PermitExpirableSemaphore.tryRelease(permitId)', 'permitId', badName, (l, v, n) => pes(l, n).tryRelease(any(v))),
    e('PermitExpirableSemaphore.updateLeaseTime(id, leaseTime)', 'leaseTime', badDuration(false), (l, v, n) =>
      pes(l, n).updateLeaseTime('id', any(v)),
    ),
    e('CountDownLatch.trySetCount(count)', 'count', badCount(0), (l, v, n) => latch(l, n).trySetCount(any(v))),
    e('CountDownLatch.await({ waitTime })', 'waitTime', badDuration(true), (l, v, n) =>
      latch(l, n).await({ waitTime: any(v) }),
    ),
    e('CountDownLatch.await(options)', 'options', badOptions, (l, v, n) => latch(l, n).await(any(v))),
    e('CountDownLatch.await({ signal })', 'signal', badSignal, (l, v, n) => latch(l, n).await({ signal: any(v) })),
    e('PermitExpirableSemaphore.acquire(options)', 'options', badOptions, (l, v, n) => pes(l, n).acquire(any(v))),
  ];
}

/** Every public entry point that takes an argument, each argument on its own. */
export function entryPoints(redis: Redis): EntryPoint[] {
  return [
    ...clientEntries(redis),
    ...Object.entries(LOCKS).flatMap(([kind, make]) => lockEntries(kind, make)),
    ...fencedEntries(),
    ...semaphoreEntries(),
  ];
}

function fencedEntries(): EntryPoint[] {
  const fenced = (l: LockClient, n: number) => l.getFencedLock(`bad-${n}`);
  return [
    {
      name: 'FencedLock.lockAndGetToken({ leaseTime })',
      argument: 'leaseTime',
      bad: badDuration(false),
      call: (l, v, n) => fenced(l, n).lockAndGetToken({ leaseTime: any(v) }),
    },
    {
      name: 'FencedLock.tryLockAndGetToken({ waitTime })',
      argument: 'waitTime',
      bad: badDuration(true),
      call: (l, v, n) => fenced(l, n).tryLockAndGetToken({ waitTime: any(v) }),
    },
    {
      name: 'FencedLock.tryLockAndGetToken({ leaseTime })',
      argument: 'leaseTime',
      bad: badDuration(false),
      call: (l, v, n) => fenced(l, n).tryLockAndGetToken({ leaseTime: any(v) }),
    },
    {
      name: 'FencedLock.lockAndGetToken(options)',
      argument: 'options',
      bad: badOptions,
      call: (l, v, n) => fenced(l, n).lockAndGetToken(any(v)),
    },
    {
      name: 'FencedLock.tryLockAndGetToken(options)',
      argument: 'options',
      bad: badOptions,
      call: (l, v, n) => fenced(l, n).tryLockAndGetToken(any(v)),
    },
  ];
}
