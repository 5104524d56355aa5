/**
 * Helpers that inject faults: finding a fresh holder, the lock's key, repeating a fault.
 */
import { now } from '../rng.js';
import type { OpenSection } from '../runner/register.js';
import type { Server } from '../runner/env.js';
import type { FaultContext } from './types.js';

/** The lock hash of a Lock / FairLock / FencedLock named `name` (docs/guarantees.md, 4. Keys). */
export const lockKey = (name: string): string => `latchkey:{${name}}:lock`;

/** A section in flight on `res` that entered at most `maxAgeMs` ago (so it has most of its hold left). */
export function freshHolder(
  ctx: FaultContext,
  res: string,
  maxAgeMs = Number.POSITIVE_INFINITY,
): OpenSection | undefined {
  const fresh = ctx.register.open(res).filter((s) => now() - s.enteredAt <= maxAgeMs);
  return ctx.rng.pick(fresh);
}

/**
 * Waits for `pick` to find a target, while injecting a fault then would still leave `needMs` of
 * the scenario (the fault and the recovery after it). Too late: the fault schedule is over, and
 * this sleeps out the scenario and resolves undefined.
 */
export async function findTarget<T>(
  ctx: FaultContext,
  pick: () => T | undefined,
  needMs: number,
): Promise<T | undefined> {
  const found = await ctx.until(() => (ctx.remaining() < needMs ? null : pick()));
  if (found !== null && found !== undefined) return found;
  await ctx.sleep(ctx.remaining());
  return undefined;
}

/** SIGSTOPs a worker process for `ms`; its holds may be lost meanwhile (the lease runs out). */
export async function freezeWorker(ctx: FaultContext, worker: number, ms: number): Promise<void> {
  const target = ctx.fleet.workers[worker];
  if (!target) return;
  const scope = { worker };
  ctx.fault({
    kind: 'holder-stopped',
    phase: 'start',
    losesLocks: true,
    takesHolds: true,
    lostAfterMs: ctx.lease,
    detect: true,
    scope,
    detail: `SIGSTOP ${ms} ms`,
  });
  ctx.fleet.freeze(target);
  try {
    await ctx.sleep(ms);
  } finally {
    ctx.fleet.thaw(target);
    ctx.fault({ kind: 'holder-stopped', phase: 'end', losesLocks: true, scope });
  }
}

/**
 * SIGSTOPs redis-server(s) for `ms`: commands and replies wait, the servers' clocks do not.
 * `effect`: whether holds may be lost, or surely are (the stop outlasts every lease).
 */
export async function freezeServers(
  ctx: FaultContext,
  servers: readonly Server[],
  ms: number,
  effect: 'none' | 'may' | 'takes',
): Promise<void> {
  const detail = `SIGSTOP server ${servers.map((s) => s.index).join(',')} for ${ms} ms`;
  const losesLocks = effect !== 'none';
  ctx.fault({
    kind: 'redis-stopped',
    phase: 'start',
    losesLocks,
    takesHolds: effect === 'takes',
    lostAfterMs: ctx.lease,
    detail,
  });
  for (const server of servers) server.process.freeze();
  try {
    await ctx.sleep(ms);
  } finally {
    for (const server of servers) server.process.resume();
    ctx.fault({ kind: 'redis-stopped', phase: 'end', losesLocks });
  }
}

/**
 * Stalls every connection of one worker, both ways, for `ms` (a partition; no byte is lost).
 * `takesHolds`: it outlasts the lease, so the worker's holds in flight are surely lost.
 */
export async function partition(
  ctx: FaultContext,
  kind: string,
  worker: number,
  ms: number,
  takesHolds: boolean,
): Promise<void> {
  const proxies = ctx.env.proxies[worker] ?? [];
  const scope = { worker };
  ctx.fault({
    kind,
    phase: 'start',
    losesLocks: true,
    takesHolds,
    lostAfterMs: ctx.lease,
    scope,
    detail: `all connections stalled ${ms} ms`,
  });
  for (const proxy of proxies) proxy.stall('both');
  try {
    await ctx.sleep(ms);
  } finally {
    for (const proxy of proxies) proxy.resume('both');
    ctx.fault({ kind, phase: 'end', losesLocks: true, scope });
  }
}

/**
 * After a warm-up, repeats `round` (a fault of about `faultMs`, then a pause) while a fault would
 * still leave `recoveryMs` of the scenario: time for the primitive to show it recovered.
 */
export async function repeat(
  ctx: FaultContext,
  warmupMs: number,
  faultMs: number,
  round: () => Promise<void>,
  recoveryMs = 1_500,
): Promise<void> {
  await ctx.sleep(warmupMs);
  while (ctx.running() && ctx.remaining() > faultMs + recoveryMs) await round();
}
