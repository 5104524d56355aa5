/**
 * Scenario 7: what a lock costs Redis. Per primitive and per peer, uncontended (one client in a
 * loop) and contended (several clients on one key, holding it 0 ms), Redis' own counters over a
 * few thousand acquire + release pairs: the time spent inside scripts (`INFO commandstats`), the
 * plain commands sent beside them, and the server's CPU (`INFO cpu`). Once many clients share one
 * Redis, this is what decides how many locks per second a node serves.
 */
import { performance } from 'node:perf_hooks';
import type { Redis } from 'ioredis';
import type { BenchLibrary, BenchLock } from '../libraries.js';
import { FLOOR_TWO_SCRIPTS } from '../names.js';
import { commandStats, countSentCommands, redisCpuSeconds, sentCost, type SentCost } from '../redis-counters.js';
import { floorScripts } from './single.js';

/** One contestant in one mode, every round added up, per acquire + release pair. */
export interface RedisCostRow {
  library: string;
  /** Clients taking turns on the one key: 1 uncontended. */
  clients: number;
  pairs: number;
  /** Redis time inside scripts per pair (µs): the target's figure. */
  scriptUs: number;
  /** Scripts sent per pair (round trips). */
  scripts: number;
  /** Redis time of the plain commands sent per pair (µs). */
  plainUs: number;
  /** Plain commands sent per pair, and which. */
  plain: number;
  plainNames: string[];
  /** Commands the scripts ran per pair. */
  inner: number;
  /** Redis CPU (user + system) per pair (µs): the scripts, the commands, and reading and writing sockets. */
  cpuUs: number;
}

export interface RedisCostOptions {
  /** Pairs per contestant and mode, over all rounds. */
  readonly pairs: number;
  /** Rounds, in a rotating order: drift of the machine reaches every contestant alike. */
  readonly rounds: number;
  /** Clients on the one key of the contended rows. */
  readonly clients: number;
  /** Pairs each client makes before counting starts (scripts loaded, connections made, JIT). */
  readonly warmUp: number;
  /** A measure stops here even short of its pairs. */
  readonly capMs: number;
}

/** The two bare scripts of scenario 1's floor as a library: no lock waits, so uncontended only. */
function floorLibrary(scripts: { take: string; give: string }): BenchLibrary {
  return {
    name: FLOOR_TWO_SCRIPTS,
    open: (redis) => ({
      lock: (name) => ({
        acquire: async () => void (await redis.evalsha(scripts.take, 1, name, 'owner', 30_000)),
        release: async () => void (await redis.evalsha(scripts.give, 1, name, 'owner')),
      }),
      close: () => Promise.resolve(),
    }),
  };
}

/** What one measure counted. */
interface Sample {
  pairs: number;
  cost: SentCost;
  cpuSec: number;
}

/**
 * An acquisition, asked again when the library gives up (redlock's retries, redis-semaphore's
 * timeout) until `until`: false when it never came.
 */
async function acquire(lock: BenchLock, until: number): Promise<boolean> {
  while (performance.now() < until) {
    try {
      await lock.acquire();
      return true;
    } catch {
      // asked again: the wait goes on
    }
  }
  return false;
}

/**
 * `clients` fresh sessions of `library`, each on its own connection, warm up one after the other,
 * then take turns on `name` until `pairs` pairs are done, between CONFIG RESETSTAT and a read of
 * the counters. The sessions close after the read, so that nothing they do later is counted.
 */
async function measure(
  library: BenchLibrary,
  open: () => Redis,
  admin: Redis,
  name: string,
  clients: number,
  pairs: number,
  options: RedisCostOptions,
): Promise<Sample> {
  const connections = Array.from({ length: clients }, open);
  const sessions = connections.map((connection) => library.open(connection));
  try {
    const locks = sessions.map((session) => session.lock(name));
    const warm = performance.now() + options.capMs;
    for (const lock of locks)
      for (let i = 0; i < options.warmUp && (await acquire(lock, warm)); i++) await lock.release();
    await admin.config('RESETSTAT');
    const cpuBefore = await redisCpuSeconds(admin);
    const counted = countSentCommands();
    let done = 0;
    const until = performance.now() + options.capMs;
    await Promise.all(
      locks.map(async (lock) => {
        while (done < pairs && (await acquire(lock, until))) {
          await lock.release();
          done++;
        }
      }),
    );
    const sent = counted();
    const cost = sentCost(await commandStats(admin), sent);
    return { pairs: done, cost, cpuSec: (await redisCpuSeconds(admin)) - cpuBefore };
  } finally {
    await Promise.all(sessions.map((session) => session.close()));
    for (const connection of connections) connection.disconnect();
  }
}

function row(library: string, clients: number, samples: readonly Sample[]): RedisCostRow {
  const sum = (pick: (sample: Sample) => number): number => samples.reduce((total, s) => total + pick(s), 0);
  const pairs = sum((s) => s.pairs);
  const per = (pick: (sample: Sample) => number): number => sum(pick) / pairs;
  return {
    library,
    clients,
    pairs,
    scriptUs: per((s) => s.cost.scriptUsec),
    scripts: per((s) => s.cost.scripts),
    plainUs: per((s) => s.cost.plainUsec),
    plain: per((s) => s.cost.plain),
    plainNames: [...new Set(samples.flatMap((s) => s.cost.plainNames))],
    inner: per((s) => s.cost.inner),
    cpuUs: per((s) => s.cpuSec * 1e6),
  };
}

/**
 * Scenario 7 over `libs` (and the floor, uncontended): every contestant and mode once per round,
 * in an order that rotates each round, each on key names of its own.
 */
export async function redisCost(
  open: () => Redis,
  admin: Redis,
  libs: readonly BenchLibrary[],
  options: RedisCostOptions,
  progress: (line: string) => void,
): Promise<RedisCostRow[]> {
  const floor = floorLibrary(await floorScripts(admin));
  const measures = [floor, ...libs].flatMap((library) =>
    (library === floor ? [1] : [1, options.clients]).map((clients) => ({ library, clients })),
  );
  const samples = measures.map((): Sample[] => []);
  const perRound = Math.ceil(options.pairs / options.rounds);
  for (let round = 0; round < options.rounds; round++)
    for (let i = 0; i < measures.length; i++) {
      const index = (i + round) % measures.length;
      const { library, clients } = measures[index]!;
      const name = `bench:cost:${library.name}:${clients}`;
      samples[index]!.push(await measure(library, open, admin, name, clients, perRound, options));
    }
  return measures.map(({ library, clients }, i) => {
    const result = row(library.name, clients, samples[i]!);
    progress(
      `  ${result.library}, ${result.clients} client${result.clients > 1 ? 's' : ''}: ` +
        `${result.scriptUs.toFixed(1)} µs in ${result.scripts.toFixed(2)} scripts, ` +
        `${result.plainUs.toFixed(1)} µs in ${result.plain.toFixed(2)} plain commands, ` +
        `Redis CPU ${result.cpuUs.toFixed(1)} µs per pair (${result.pairs} pairs)`,
    );
    return result;
  });
}
