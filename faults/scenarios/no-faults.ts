/**
 * The no-fault scenarios, one per primitive, and the control scenario without any lock.
 */
import type { Primitive } from '../protocol.js';
import { resource } from './common.js';
import { STRICT, type Scenario } from './types.js';

/**
 * Many workers, no fault: the baseline every primitive must meet exactly (0 overlaps, 0 lost
 * updates, never more holders than permits, 0 errors, 0 loss signals, nobody stranded). A 1 s
 * lease has the watchdog renew every ~333 ms, so renewals race releases as they do under load,
 * and still leaves a renewal 667 ms to come back before the lease it extends ends.
 */
function noFaults(primitive: Primitive, quick: boolean, title: string): Scenario {
  return {
    name: primitive,
    title: `${title}, 4 workers x ${primitive === 'read-write-lock' ? 4 : 3} tasks, no faults`,
    quick,
    servers: 1,
    proxied: false,
    workers: 4,
    client: { watchdogTimeout: 1_000 },
    resources: [resource(primitive)],
    durationMs: { quick: 2_000, full: 12_000 },
    expect: STRICT,
  };
}

/**
 * Every section ends about when the watchdog renews it (lease 750 ms, renewed at ~250 ms; sections
 * 215-285 ms): each release races a renewal. A release must never look like a loss.
 */
const renewRelease: Scenario = {
  name: 'renew-release',
  title: 'Lock: every release races a watchdog renewal (lease 750 ms, sections 215-285 ms), no faults',
  quick: true,
  servers: 1,
  proxied: false,
  workers: 4,
  client: { watchdogTimeout: 750 },
  // Six locks at once: six times the races per second.
  resources: [1, 2, 3, 4, 5, 6].map((n) =>
    resource('lock', {
      name: `renew-${n}`,
      ...{ tasks: 2, shared: 1, styles: ['withLock', 'acquire'], holdMs: [215, 285], thinkMs: [0, 5] },
    }),
  ),
  durationMs: { quick: 4_000, full: 12_000 },
  expect: { ...STRICT, everyTaskEnters: false },
};

export const noFaultScenarios: readonly Scenario[] = [
  noFaults('lock', true, 'Lock'),
  noFaults('fair-lock', true, 'FairLock'),
  noFaults('fenced-lock', true, 'FencedLock'),
  noFaults('semaphore', true, 'Semaphore(2)'),
  // A read-write lock promises no fairness (docs/guarantees.md, 1): a starved writer shows in
  // "max wait", not as a failure.
  {
    ...noFaults('read-write-lock', true, 'ReadWriteLock (1 reader, 3 writers per worker)'),
    expect: { ...STRICT, everyTaskEnters: false },
  },
  renewRelease,
  noFaults('spin-lock', false, 'SpinLock'),
  {
    ...noFaults('red-lock', false, 'RedLock over 5 servers'),
    servers: 5,
  },
];

/** The same workers with no lock at all: the checker must see overlaps and lost updates. */
export const control: Scenario = {
  name: 'control-no-lock',
  title: 'no lock at all (control: the checker must FAIL it)',
  quick: true,
  control: true,
  servers: 1,
  proxied: false,
  workers: 4,
  client: {},
  resources: [resource('none')],
  durationMs: { quick: 1_000, full: 3_000 },
  expect: STRICT,
};
