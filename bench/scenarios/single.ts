/**
 * Scenarios 1 and 2: one client acquiring and releasing in a loop, and concurrent tasks on one
 * client, next to the bare two-script floor.
 */
import { performance } from 'node:perf_hooks';
import type { Redis } from 'ioredis';
import type { BenchLibrary, BenchSession } from '../libraries.js';
import { lockKeys } from '../../src/keys.js';
import { newOwnerId, randomId } from '../../src/owner.js';
import { lockAcquire, lockRelease } from '../../src/scripts/index.js';
import { FLOOR_LOCK_SCRIPTS, FLOOR_TWO_SCRIPTS } from '../names.js';
import { median, roundRatios } from '../stats.js';

export interface ThroughputResult {
  library: string;
  /** The median of the rounds' rates. */
  pairsPerSec: number;
  /** Each round's rate, in round order: all contestants of a round ran within a second or two. */
  rounds?: number[];
  /** Scenario 1 only: this library's pairs/s over the floor's, the median of the rounds' ratios. */
  ofFloor?: number;
  /** Scenario 5 only: over how many servers. */
  servers?: number;
}

export const SET_IF_ABSENT = "return redis.call('set', KEYS[1], ARGV[1], 'PX', ARGV[2], 'NX')";
export const DELETE_IF_OWNER =
  "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0";

/** Sends `take`, then `give`, one command at a time until `until()`: the pairs it completed. */
export async function pairsUntil(
  take: () => Promise<unknown>,
  give: () => Promise<unknown>,
  until: () => boolean,
): Promise<number> {
  let pairs = 0;
  while (!until()) {
    await take();
    await give();
    pairs++;
  }
  return pairs;
}

/** The floor's two scripts, loaded: take a key if absent, give it back if still the owner's. */
export async function floorScripts(redis: Redis): Promise<{ take: string; give: string }> {
  const take = (await redis.script('LOAD', SET_IF_ABSENT)) as string;
  const give = (await redis.script('LOAD', DELETE_IF_OWNER)) as string;
  return { take, give };
}

/** The floor: a bare ioredis loop of two EVALSHA round trips (take, give back) and nothing else. */
export async function floorLoop(
  redis: Redis,
  scripts: { take: string; give: string },
  name: string,
  until: () => boolean,
): Promise<number> {
  return pairsUntil(
    () => redis.evalsha(scripts.take, 1, name, 'owner', 30_000),
    () => redis.evalsha(scripts.give, 1, name, 'owner'),
    until,
  );
}

/**
 * latchkey's own acquire and release scripts in a bare ioredis loop, with the keys and arguments a
 * `getLock(name)` handle sends (an owner id as long as its own): what latchkey's pair costs with
 * none of its JavaScript around the two round trips. The scripts must be loaded.
 */
export async function lockScriptsLoop(redis: Redis, name: string, until: () => boolean): Promise<number> {
  const { hash } = lockKeys('latchkey:', name);
  const clientId = randomId(16);
  // A new owner each pair, as a handle makes one per acquisition.
  let owner = '';
  return pairsUntil(
    () => {
      owner = `${clientId}:${newOwnerId()}`;
      return redis.evalsha(lockAcquire.sha, 1, hash, owner, 30_000);
    },
    () => redis.evalsha(lockRelease.sha, 1, hash, owner, 1, 20_000, '1'),
    until,
  );
}

/** Acquire + release on one lock name in a loop, one at a time. */
export async function libraryLoop(session: BenchSession, name: string, until: () => boolean): Promise<number> {
  const lock = session.lock(name);
  return pairsUntil(
    () => lock.acquire(),
    () => lock.release(),
    until,
  );
}

/** Runs `loop` for `ms` and returns pairs per second. */
export async function timed(ms: number, loop: (until: () => boolean) => Promise<number>): Promise<number> {
  const started = performance.now();
  const end = started + ms;
  const pairs = await loop(() => performance.now() >= end);
  return (pairs * 1000) / (performance.now() - started);
}

/** A contestant of a throughput scenario: one loop over its own open session. */
export interface Contestant {
  readonly name: string;
  readonly loop: (until: () => boolean) => Promise<number>;
}

/**
 * Runs every contestant for `sliceMs`, `rounds` times in a rotating order, and keeps each one's
 * median rate: load from other processes on a shared machine then hits every library alike
 * instead of whichever happened to run at that moment. The first round only warms up.
 */
export async function interleaved(
  contestants: readonly Contestant[],
  sliceMs: number,
  rounds: number,
): Promise<Map<string, number[]>> {
  const rates = new Map<string, number[]>(contestants.map((contestant) => [contestant.name, []]));
  for (let round = 0; round <= rounds; round++) {
    for (let i = 0; i < contestants.length; i++) {
      const contestant = contestants[(i + round) % contestants.length]!;
      const rate = await timed(round === 0 ? Math.min(200, sliceMs) : sliceMs, contestant.loop);
      if (round > 0) rates.get(contestant.name)!.push(rate);
    }
  }
  return rates;
}

/** The median over rounds of `a`'s rate over `b`'s in the same round: drift of the machine cancels out. */
export function pairedRatio(a: readonly number[], b: readonly number[]): number {
  return median(roundRatios(a, b));
}

async function openAll<T>(
  libs: readonly BenchLibrary[],
  redis: Redis,
  fn: (sessions: BenchSession[]) => Promise<T>,
): Promise<T> {
  const sessions = libs.map((library) => library.open(redis));
  try {
    return await fn(sessions);
  } finally {
    await Promise.all(sessions.map((session) => session.close()));
  }
}

export interface ThroughputOptions {
  readonly sliceMs: number;
  readonly rounds: number;
}

/** Scenario 1: one client, acquire + release in a loop, next to the floor. */
export async function singleClient(
  redis: Redis,
  libs: readonly BenchLibrary[],
  options: ThroughputOptions,
  progress: (line: string) => void,
): Promise<ThroughputResult[]> {
  const floorName = FLOOR_TWO_SCRIPTS;
  // Loaded once here, so that no slice of the floors spends a round trip on it.
  const floorShas = await floorScripts(redis);
  for (const script of [lockAcquire, lockRelease]) await redis.script('LOAD', script.source);
  return openAll(libs, redis, async (sessions) => {
    const contestants: Contestant[] = [
      { name: floorName, loop: (until) => floorLoop(redis, floorShas, 'bench:floor', until) },
      { name: FLOOR_LOCK_SCRIPTS, loop: (until) => lockScriptsLoop(redis, 'bench:lock-scripts', until) },
      ...libs.map((library, i) => ({
        name: library.name,
        loop: (until: () => boolean) => libraryLoop(sessions[i]!, `bench:single:${library.name}`, until),
      })),
    ];
    const rates = await interleaved(contestants, options.sliceMs, options.rounds);
    const floor = rates.get(floorName)!;
    return contestants.map(({ name }) => {
      const rounds = rates.get(name)!;
      const pairsPerSec = median(rounds);
      const ofFloor = pairedRatio(rounds, floor);
      progress(`  ${name}: ${Math.round(pairsPerSec)} pairs/s (${ofFloor.toFixed(2)} of floor)`);
      return { library: name, pairsPerSec, rounds, ofFloor };
    });
  });
}

/** Scenario 2: `tasks` concurrent tasks, each on its own lock name, one client. */
export async function concurrentTasks(
  redis: Redis,
  libs: readonly BenchLibrary[],
  tasks: number,
  options: ThroughputOptions,
  progress: (line: string) => void,
): Promise<ThroughputResult[]> {
  return openAll(libs, redis, async (sessions) => {
    const contestants: Contestant[] = libs.map((library, l) => ({
      name: library.name,
      loop: async (until) => {
        const names = Array.from({ length: tasks }, (_, i) => `bench:many:${library.name}:${i}`);
        const counts = await Promise.all(names.map((name) => libraryLoop(sessions[l]!, name, until)));
        return counts.reduce((a, b) => a + b, 0);
      },
    }));
    const rates = await interleaved(contestants, options.sliceMs, options.rounds);
    return contestants.map(({ name }) => {
      const rounds = rates.get(name)!;
      const pairsPerSec = median(rounds);
      progress(`  ${name}: ${Math.round(pairsPerSec)} pairs/s`);
      return { library: name, pairsPerSec, rounds };
    });
  });
}
