/**
 * Scenarios waiter-partitioned and holder-partitioned: a worker's connections stalled by the proxy.
 */
import { resource, SIGNALLED } from './common.js';
import { findTarget, freshHolder, partition, repeat } from './inject.js';
import { STRICT, type Scenario } from './types.js';

const LEASE = 1_000;

/**
 * A waiter partitioned (every connection of its process stalled, both ways) while it queues: a
 * release hands it the lock, the hand-over's reservation (its lease, 1 s) runs out before it hears,
 * the lock goes to the next. When the partition heals it reads the late hand-over: it must not
 * take that as a grant (docs/guarantees.md, 3.9). Nobody else is faulted, so any overlap is one;
 * 0 believed overlaps, strictly.
 */
const waiterPartitioned: Scenario = {
  name: 'waiter-partitioned',
  title: 'Lock: a waiting process partitioned 1.6 s while it is handed the lock (1 s lease)',
  quick: true,
  servers: 1,
  proxied: true,
  workers: 4,
  client: { watchdogTimeout: LEASE },
  resources: [resource('lock', { styles: SIGNALLED, holdMs: [2, 10] })],
  durationMs: { quick: 5_500, full: 16_000 },
  expect: { ...STRICT, lossSignals: 'exposed', recovers: true },
  faults: (ctx) =>
    repeat(ctx, 300, 1_600, async () => {
      // A process with tasks queued and none holding: a pure waiter.
      const pick = (): number | undefined => {
        const busy = new Set(ctx.register.open().map((s) => s.worker));
        const waiters = ctx.fleet.workers.filter((w) => w.waiting.size > 0 && !busy.has(w.index));
        return ctx.rng.pick(waiters)?.index;
      };
      const worker = await findTarget(ctx, pick, 1_600 + 1_500);
      if (worker !== undefined) await partition(ctx, 'waiter-partitioned', worker, 1_600, false);
      await ctx.sleep(800);
    }),
};

/**
 * A holder partitioned for 2.5 leases in the middle of a long section: its renewals cannot reach
 * Redis, the lock expires and a waiter takes it. The holder's lease signal must abort at the end
 * of the validity it can prove, which is just before Redis expires the key, so it stops before
 * its successor enters. Both events are timers in different processes: overlaps up to 100 ms
 * (timer lag on a loaded machine) are not counted, nor what the holder wrote in that window
 * (only fencing can keep that out: see holder-stopped).
 */
const holderPartitioned: Scenario = {
  name: 'holder-partitioned',
  title: 'Lock: a holding process partitioned for 2.5 leases (1 s lease)',
  quick: false,
  servers: 1,
  proxied: true,
  workers: 4,
  client: { watchdogTimeout: LEASE },
  resources: [resource('lock', { styles: SIGNALLED, holdMs: [300, 700] })],
  durationMs: { quick: 5_000, full: 16_000 },
  expect: {
    ...STRICT,
    believedToleranceMs: 100,
    acceptedOverlaps: 'info',
    lostUpdates: 'info',
    lossSignals: 'exposed',
    // Long sections and long stalls: in one run not every task gets its turn.
    everyTaskEnters: false,
    recovers: true,
  },
  faults: (ctx) =>
    repeat(ctx, 300, 2.5 * LEASE, async () => {
      const victim = await findTarget(ctx, () => freshHolder(ctx, 'lock', 100), 2.5 * LEASE + 1_500);
      if (victim) await partition(ctx, 'holder-partitioned', victim.worker, 2.5 * LEASE, true);
      await ctx.sleep(1_000);
    }),
};

export const networkFaultScenarios: readonly Scenario[] = [waiterPartitioned, holderPartitioned];
