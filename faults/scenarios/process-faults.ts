/**
 * Scenarios that stop a process: a holder, or redis-server itself, SIGSTOPped and resumed.
 */
import type { Primitive } from '../protocol.js';
import { resource, SIGNALLED } from './common.js';
import { findTarget, freezeServers, freezeWorker, freshHolder, repeat } from './inject.js';
import { STRICT, type Scenario } from './types.js';

const LEASE = 1_000;
/** Time left after the last stop for the primitive to show it recovered (waiters, queue places). */
const RECOVERY = 2_500;

/**
 * A holder's process SIGSTOPped for 2.5 leases (a GC pause, a VM freeze): its lock expires and
 * passes on while it cannot know. It must learn when it runs again (signal or rejected release);
 * what it believed meanwhile overlaps its successor (information: nothing can prevent that), and
 * only fencing keeps its late write out: with a FencedLock, 0 accepted overlaps and 0 lost updates.
 */
function holderStopped(primitive: Primitive, quick: boolean): Scenario {
  const fenced = primitive === 'fenced-lock';
  return {
    name: fenced ? 'holder-stopped' : 'holder-stopped-unfenced',
    title: `${fenced ? 'FencedLock' : 'Lock (no fencing)'}: a holder process SIGSTOPped for 2.5 leases`,
    quick,
    servers: 1,
    proxied: false,
    workers: 4,
    // The frozen process's waiters keep their places in the queue until fairWaiterTimeout: 2 s
    // bounds how long they can hold the lock up (docs/guarantees.md, 3.6: a vanished waiter is skipped).
    client: { watchdogTimeout: LEASE, fairWaiterTimeout: 2_000 },
    resources: [resource(primitive, { styles: fenced ? ['acquire', 'token'] : SIGNALLED, holdMs: [5, 40] })],
    durationMs: { quick: 6_000, full: 16_000 },
    expect: {
      ...STRICT,
      believedToleranceMs: undefined,
      acceptedOverlaps: fenced ? 'zero' : 'info',
      lostUpdates: fenced ? 'zero' : 'info',
      lossSignals: 'exposed',
      detectWithinMs: LEASE,
      recovers: true,
    },
    faults: (ctx) =>
      repeat(
        ctx,
        500,
        2.5 * LEASE,
        async () => {
          const victim = await findTarget(ctx, () => freshHolder(ctx, primitive), 2.5 * LEASE + RECOVERY);
          if (victim) await freezeWorker(ctx, victim.worker, 2.5 * LEASE);
          await ctx.sleep(800);
        },
        RECOVERY,
      ),
  };
}

/**
 * Redis SIGSTOPped for 300 ms, under a 1.5 s lease: every command and reply (hand-overs included)
 * waits, no lease runs out. Nothing may be lost: no loss signal, no error, no overlap.
 */
const redisStoppedShort: Scenario = {
  name: 'redis-stopped-short',
  title: 'Lock: redis-server SIGSTOPped 300 ms (shorter than the 1.5 s lease), repeatedly',
  quick: true,
  servers: 1,
  proxied: false,
  workers: 4,
  client: { watchdogTimeout: 1_500 },
  resources: [resource('lock')],
  durationMs: { quick: 3_000, full: 12_000 },
  expect: { ...STRICT, recovers: true },
  faults: (ctx) =>
    repeat(ctx, 300, 800, async () => {
      await freezeServers(ctx, ctx.env.live, 300, 'none');
      await ctx.sleep(ctx.rng.int(300, 600));
    }),
};

/**
 * Redis SIGSTOPped for 2.5 leases: every lease runs out by the server's clock while nobody can
 * renew. A holder must stop believing at the end of the validity it can prove (from before its
 * last renewal), long before anyone else can acquire (after the server resumes): 0 believed
 * overlaps, strictly. A hand-over published just before the stop arrives late and must not grant.
 */
function redisStoppedLong(primitive: Primitive, quick: boolean): Scenario {
  const name = primitive === 'lock' ? 'redis-stopped-long' : `redis-stopped-long-${primitive}`;
  return {
    name,
    title: `${primitive}: redis-server SIGSTOPped 2.5 s (longer than the 1 s lease)`,
    quick,
    servers: 1,
    proxied: false,
    workers: 4,
    client: { watchdogTimeout: LEASE },
    // Sections long enough that a stop finds holders inside theirs.
    resources: [resource(primitive, { styles: SIGNALLED, holdMs: [5, 60] })],
    durationMs: { quick: 6_000, full: 15_000 },
    expect: { ...STRICT, lossSignals: 'exposed', recovers: true },
    faults: (ctx) =>
      repeat(
        ctx,
        500,
        2.5 * LEASE,
        async () => {
          await freezeServers(ctx, ctx.env.live, 2.5 * LEASE, 'takes');
          await ctx.sleep(1_000);
        },
        RECOVERY,
      ),
  };
}

export const processFaultScenarios: readonly Scenario[] = [
  holderStopped('fenced-lock', true),
  holderStopped('lock', false),
  redisStoppedShort,
  redisStoppedLong('lock', true),
  redisStoppedLong('fair-lock', false),
];
