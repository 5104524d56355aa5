/**
 * Scenarios key-deleted and key-expired: a held lock's key deleted or expired behind its holder.
 */
import type { Primitive } from '../protocol.js';
import { resource } from './common.js';
import { findTarget, freshHolder, lockKey, repeat } from './inject.js';
import { STRICT, type Scenario } from './types.js';

const LEASE = 900;

/**
 * The lock key deleted (`DEL`) or expired (`PEXPIRE 1`) behind a holder that has just entered a
 * long section (an operator, a failover that lost the write, a clock jump): the holder must learn
 * from its lease signal within the lease (renewals run every third of it), before its section
 * ends, so it never writes; the waiters take over meanwhile (believed overlaps: information).
 * The figure is the detection latency.
 */
function keyLost(primitive: Primitive, how: 'deleted' | 'expired', quick: boolean): Scenario {
  return {
    name: `key-${how}`,
    title: `${primitive}: the lock key ${how === 'deleted' ? 'DEL' : 'PEXPIRE 1'}'d behind a holder, 0.9 s lease`,
    quick,
    servers: 1,
    proxied: false,
    workers: 3,
    client: { watchdogTimeout: LEASE },
    resources: [
      resource(primitive, {
        tasks: 2,
        shared: 1,
        styles: primitive === 'fenced-lock' ? ['acquire'] : ['withLock', 'acquire'],
        holdMs: [1_300, 1_600],
        thinkMs: [0, 20],
      }),
    ],
    durationMs: { quick: 6_000, full: 16_000 },
    expect: {
      ...STRICT,
      believedToleranceMs: undefined,
      lossSignals: 'exposed',
      detectWithinMs: LEASE,
      everyTaskEnters: false,
      recovers: true,
    },
    faults: (ctx) =>
      repeat(ctx, 200, 1_000, async () => {
        // Room left for the detection (under a lease) and a takeover after it.
        const victim = await findTarget(ctx, () => freshHolder(ctx, primitive, 150), 2_500);
        if (!victim) return;
        const admin = ctx.env.servers[0]?.admin;
        const scope = { cs: victim.cs };
        ctx.fault({ kind: `key-${how}`, phase: 'instant', losesLocks: true, takesHolds: true, detect: true, scope });
        if (how === 'deleted') await admin?.del(lockKey(primitive));
        else await admin?.pexpire(lockKey(primitive), 1);
        // Let the victim notice and a waiter take over before the next one.
        await ctx.sleep(1_000);
      }),
  };
}

export const keyFaultScenarios: readonly Scenario[] = [
  keyLost('lock', 'deleted', true),
  keyLost('fenced-lock', 'expired', false),
];
