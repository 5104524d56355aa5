import { performance } from 'node:perf_hooks';
import type { Redis } from 'ioredis';
import { Redlock } from '../redlock.js';
import { LockClient, type Lock } from '../latchkey.js';
import { percentile } from '../stats.js';

export interface LatencyResult {
  library: string;
  servers: number;
  acquireP50: number;
  acquireP99: number;
}

async function latencies(
  iterations: number,
  acquire: () => Promise<void>,
  release: () => Promise<void>,
): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; i < iterations + 20; i++) {
    const started = performance.now();
    await acquire();
    const took = performance.now() - started;
    await release();
    if (i >= 20) samples.push(took); // the first few warm up scripts and connections
  }
  return samples;
}

function result(library: string, servers: number, samples: number[]): LatencyResult {
  return { library, servers, acquireP50: percentile(samples, 50), acquireP99: percentile(samples, 99) };
}

/** Scenario 5: uncontended acquire latency of one plain lock, MultiLock over 3 and RedLock over 5 servers. */
export async function multiServer(redis: readonly Redis[], iterations: number): Promise<LatencyResult[]> {
  const clients = redis.map((connection) => new LockClient(connection));
  const results: LatencyResult[] = [];
  try {
    const plain = clients[0]!.getLock('bench:multi:plain');
    results.push(
      result(
        'latchkey Lock',
        1,
        await latencies(
          iterations,
          () => plain.lock(),
          () => plain.unlock(),
        ),
      ),
    );
    const members = (name: string, count: number): Lock[] =>
      clients.slice(0, count).map((client) => client.getLock(name));
    const multi = clients[0]!.getMultiLock(...members('bench:multi:multi', 3));
    results.push(
      result(
        'latchkey MultiLock',
        3,
        await latencies(
          iterations,
          () => multi.lock(),
          () => multi.unlock(),
        ),
      ),
    );
    const red = clients[0]!.getRedLock(...members('bench:multi:red', 5));
    results.push(
      result(
        'latchkey RedLock',
        5,
        await latencies(
          iterations,
          () => red.lock(),
          () => red.unlock(),
        ),
      ),
    );
    const redlock = new Redlock([...redis]);
    redlock.on('error', () => undefined);
    let held: Awaited<ReturnType<Redlock['acquire']>> | undefined;
    const samples = await latencies(
      iterations,
      async () => {
        held = await redlock.acquire(['bench:multi:redlock'], 5_000);
      },
      async () => {
        await held?.release();
      },
    );
    results.push(result('redlock', redis.length, samples));
  } finally {
    await Promise.all(clients.map((client) => client.shutdown()));
  }
  return results;
}
