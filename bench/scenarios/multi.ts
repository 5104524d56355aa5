/**
 * Scenario 5: uncontended acquire latency over independent servers (MultiLock, RedLock, redlock).
 */
import { performance } from 'node:perf_hooks';
import type { Redis } from 'ioredis';
import { Redlock } from '../redlock.js';
import { LockClient, type Lock } from '../latchkey.js';
import { floorOnServers } from '../names.js';
import { median, percentile } from '../stats.js';
import { floorScripts, interleaved, pairsUntil, type ThroughputOptions, type ThroughputResult } from './single.js';

export interface LatencyResult {
  library: string;
  servers: number;
  acquireP50: number;
  acquireP99: number;
}

/** One contestant: how it takes and gives back its lock. */
interface Contestant {
  readonly library: string;
  readonly servers: number;
  readonly acquire: () => Promise<void>;
  readonly release: () => Promise<void>;
}

/**
 * Acquire latencies of every contestant, taken in turns of ROUND acquisitions each, so that the
 * drift of a shared machine over seconds reaches them all alike. The first turn only warms up.
 */
async function interleavedLatencies(contestants: readonly Contestant[], iterations: number): Promise<number[][]> {
  const samples = contestants.map((): number[] => []);
  const ROUND = 50;
  for (let done = -ROUND; done < iterations; done += ROUND) {
    for (const [i, contestant] of contestants.entries()) {
      for (let k = 0; k < Math.min(ROUND, iterations - Math.max(0, done)); k++) {
        const started = performance.now();
        await contestant.acquire();
        const took = performance.now() - started;
        await contestant.release();
        if (done >= 0) samples[i]!.push(took);
      }
    }
  }
  return samples;
}

/** Scenario 5's two measures: acquire latency, and pairs/s in alternated slices (as scenario 1). */
export interface MultiServerResult {
  latency: LatencyResult[];
  throughput: ThroughputResult[];
}

/**
 * Scenario 5: uncontended acquire latency of one plain lock, MultiLock over 3 and RedLock over 5
 * servers, and the pairs/s of the group locks against redlock's over the same five servers.
 */
export async function multiServer(
  redis: readonly Redis[],
  iterations: number,
  throughput: ThroughputOptions,
): Promise<MultiServerResult> {
  const clients = redis.map((connection) => new LockClient(connection));
  try {
    const members = (name: string, count: number): Lock[] =>
      clients.slice(0, count).map((client) => client.getLock(name));
    const plain = clients[0]!.getLock('bench:multi:plain');
    const multi = clients[0]!.getMultiLock(...members('bench:multi:multi', 3));
    const red = clients[0]!.getRedLock(...members('bench:multi:red', 5));
    const redlock = new Redlock([...redis]);
    redlock.on('error', () => undefined);
    let held: Awaited<ReturnType<Redlock['acquire']>> | undefined;
    // The floors: the same two bare scripts as scenario 1's, on 1, 3 and 5 servers at once: what
    // sending to several servers costs this process before any lock logic.
    const scripts = await Promise.all(redis.map((connection) => floorScripts(connection)));
    const floor = (servers: number): Contestant => {
      const on = redis.slice(0, servers).map((connection, i) => ({ connection, ...scripts[i]! }));
      return {
        library: floorOnServers(servers),
        servers,
        acquire: async () => {
          await Promise.all(
            on.map(({ connection, take }) => connection.evalsha(take, 1, 'bench:multi:floor', 'o', 30_000)),
          );
        },
        release: async () => {
          await Promise.all(on.map(({ connection, give }) => connection.evalsha(give, 1, 'bench:multi:floor', 'o')));
        },
      };
    };
    const contestants: Contestant[] = [
      floor(1),
      floor(3),
      floor(5),
      { library: 'latchkey Lock', servers: 1, acquire: () => plain.lock(), release: () => plain.unlock() },
      { library: 'latchkey MultiLock', servers: 3, acquire: () => multi.lock(), release: () => multi.unlock() },
      { library: 'latchkey RedLock', servers: 5, acquire: () => red.lock(), release: () => red.unlock() },
      // With a lease, as redlock is used.
      {
        library: 'latchkey RedLock (lease)',
        servers: 5,
        acquire: () => red.lock({ leaseTime: 5_000 }),
        release: () => red.unlock(),
      },
      {
        library: 'redlock',
        servers: redis.length,
        acquire: async () => {
          held = await redlock.acquire(['bench:multi:redlock'], 5_000);
        },
        release: async () => {
          await held?.release();
        },
      },
    ];
    const samples = await interleavedLatencies(contestants, iterations);
    const latency = contestants.map((contestant, i) => ({
      library: contestant.library,
      servers: contestant.servers,
      acquireP50: percentile(samples[i]!, 50),
      acquireP99: percentile(samples[i]!, 99),
    }));
    // Pairs/s of the group locks and redlock over the same servers, with the fan-out floors as
    // bounds; the one-server rows are scenario 1's business.
    const paired = contestants.filter((contestant) => contestant.servers > 1);
    const rates = await interleaved(
      paired.map((contestant) => ({
        name: contestant.library,
        loop: (until: () => boolean) => pairsUntil(contestant.acquire, contestant.release, until),
      })),
      throughput.sliceMs,
      throughput.rounds,
    );
    return {
      latency,
      throughput: paired.map(({ library, servers }) => {
        const rounds = rates.get(library)!;
        return { library, servers, pairsPerSec: median(rounds), rounds };
      }),
    };
  } finally {
    await Promise.all(clients.map((client) => client.shutdown()));
  }
}
