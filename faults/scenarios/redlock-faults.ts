/**
 * RedLock scenarios: a minority or a majority of its five servers paused or killed.
 */
import type { Server } from '../runner/env.js';
import { resource } from './common.js';
import { freezeServers, repeat } from './inject.js';
import { STRICT, type Expectations, type FaultContext, type Scenario } from './types.js';

const LEASE = 1_500;

/** Failures a minority or majority of members may cause: typed, and reported per member. */
const QUORUM_ERRORS = ['QuorumError', 'RedisUnavailableError', 'MemberReleaseError', 'LockAcquireTimeoutError'];

/** Picks `n` distinct live servers at random. */
function someServers(ctx: FaultContext, n: number): Server[] {
  const pool = [...ctx.env.live];
  const picked: Server[] = [];
  while (picked.length < n && pool.length > 0) picked.push(...pool.splice(ctx.rng.int(0, pool.length - 1), 1));
  return picked;
}

function redLock(
  name: string,
  title: string,
  quick: boolean,
  expect: Partial<Expectations>,
  faults: Scenario['faults'],
): Scenario {
  return {
    name,
    title: `RedLock over 5 servers: ${title}`,
    quick,
    servers: 5,
    proxied: false,
    workers: 3,
    // A paused member answers nothing: its calls fail after commandTimeout, not after 10 s.
    client: { watchdogTimeout: LEASE, commandTimeout: 300 },
    resources: [resource('red-lock', { styles: ['withLock', 'acquire'], holdMs: [2, 10] })],
    durationMs: { quick: 5_000, full: 15_000 },
    expect: { ...STRICT, lossSignals: 'exposed', allowedErrors: QUORUM_ERRORS, recovers: true, ...expect },
    ...(faults ? { faults } : {}),
  };
}

/** 1 or 2 members SIGSTOPped for a lease: the majority carries on, nothing overlaps. */
const minorityPaused = redLock('redlock-minority-paused', '1-2 servers SIGSTOPped 1.5 s', true, {}, (ctx) =>
  repeat(ctx, 300, LEASE, async () => {
    // --quick has room for one round: the harder case, 2 servers.
    await freezeServers(ctx, someServers(ctx, ctx.quick ? 2 : ctx.rng.int(1, 2)), LEASE, 'may');
    await ctx.sleep(800);
  }),
);

/** 3 of 5 SIGSTOPped for 2.5 s: no majority (QuorumError), every lease lapses, no overlap after. */
const majorityPaused = redLock(
  'redlock-majority-paused',
  '3 servers SIGSTOPped 2.5 s',
  false,
  { everyTaskEnters: false },
  (ctx) =>
    repeat(ctx, 500, 2_500, async () => {
      await freezeServers(ctx, someServers(ctx, 3), 2_500, 'takes');
      await ctx.sleep(1_500);
    }),
);

/**
 * SIGKILLs servers, for good: after 1 and 2 kills the majority carries on; `third`: then none. The
 * last kill leaves a third of the run: once only a bare majority is alive, every attempt needs all
 * of them, and rival attempts that split them wait out a member's share of the wait (1.5 s here,
 * as in Redisson's algorithm) before they retry.
 */
function killed(third: boolean): Scenario['faults'] {
  return async (ctx) => {
    const kills = third ? 3 : 2;
    for (let i = 0; i < kills && ctx.running(); i++) {
      await ctx.sleep(ctx.remaining() / (kills + 2 - i));
      const [server] = someServers(ctx, 1);
      if (!server) return;
      ctx.fault({ kind: 'redis-killed', phase: 'instant', losesLocks: true, detail: `SIGKILL server ${server.index}` });
      server.dead = true;
      await server.process.stop(true);
    }
  };
}

export const redLockScenarios: readonly Scenario[] = [
  minorityPaused,
  majorityPaused,
  redLock('redlock-killed', '2 servers SIGKILLed', true, {}, killed(false)),
  redLock(
    'redlock-majority-killed',
    '3 servers SIGKILLed (no majority left)',
    false,
    { everyTaskEnters: false, recovers: false },
    killed(true),
  ),
];
