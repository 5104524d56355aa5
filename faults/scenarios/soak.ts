/**
 * The soak (`npm run faults -- --soak MINUTES`): the no-fault workload of every primitive at once,
 * for as long as asked, while workers and servers are sampled for what must not grow.
 */
import type { Primitive } from '../protocol.js';
import { resource } from './common.js';
import { STRICT, type Scenario } from './types.js';

const PRIMITIVES: readonly Primitive[] = [
  'lock',
  'fair-lock',
  'fenced-lock',
  'spin-lock',
  'read-write-lock',
  'semaphore',
  'red-lock',
];

/**
 * Six workers, every primitive (a RedLock over the five servers, the rest on the first), with
 * pauses between sections long enough that an hour's history stays a few million records. A 3 s
 * lease has the watchdog renew every second, so that renewals race releases all along, with room
 * for a loaded machine's pauses over a long run.
 */
export function soakScenario(minutes: number): Scenario {
  const ms = Math.round(minutes * 60_000);
  return {
    name: 'soak',
    title: `every primitive, 6 workers, no faults, ${minutes} min`,
    quick: false,
    servers: 5,
    proxied: false,
    workers: 6,
    client: { watchdogTimeout: 3_000 },
    resources: PRIMITIVES.map((primitive) => resource(primitive, { holdMs: [1, 6], thinkMs: [200, 600] })),
    durationMs: { quick: ms, full: ms },
    // Every task gets in and every section is exact; a read-write lock owes its writers no turn.
    expect: { ...STRICT, everyTaskEnters: false },
  };
}
