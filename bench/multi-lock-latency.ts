// Acquire+release latency of a MultiLock over 3 and a RedLock over 5 independent redis-server
// processes, against one plain Lock on one of them, in one run (not a test: no assertions).
//   node --import tsx bench/multi-lock-latency.ts [iterations=2000]
// Starts its own private servers (redis-server from PATH or REDIS_SERVER_BIN) and stops them.
import { performance } from 'node:perf_hooks';
import { Redis } from 'ioredis';
import { startRedisServer } from '../src/cli/redis-server.js';
import { LockClient, type Lock } from './latchkey.js';

const iterations = Number(process.argv[2] ?? 2_000);
const WARMUP = 100;

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

interface Row {
  readonly case: string;
  readonly servers: number;
  readonly acquire: number[];
  readonly pair: number[];
}

/** The members one after another, as the seeds' loop would take them: the sum we aim to beat. */
function sequential(locks: Lock[]): Lock {
  const each = async (fn: (lock: Lock) => Promise<unknown>): Promise<void> => {
    for (const lock of locks) await fn(lock);
  };
  return {
    lock: () => each((lock) => lock.lock()),
    tryLock: async (options) => (await each((lock) => lock.tryLock(options)), true),
    unlock: () => each((lock) => lock.unlock()),
  } as Lock;
}

async function measure(
  label: string,
  servers: number,
  lock: Lock,
  acquire: (lock: Lock) => Promise<unknown>,
): Promise<Row> {
  const row: Row = { case: label, servers, acquire: [], pair: [] };
  for (let i = 0; i < WARMUP + iterations; i++) {
    const started = performance.now();
    await acquire(lock);
    const acquired = performance.now();
    await lock.unlock();
    const released = performance.now();
    if (i < WARMUP) continue;
    row.acquire.push(acquired - started);
    row.pair.push(released - started);
  }
  return row;
}

const processes = await Promise.all(Array.from({ length: 5 }, () => startRedisServer()));
const connections = processes.map((server) => new Redis({ port: server.port, host: server.host }));
const clients = connections.map((redis) => new LockClient(redis));
try {
  const members = (name: string, count: number): Lock[] =>
    clients.slice(0, count).map((client) => client.getLock(name));
  const plain = clients[0]!.getLock('bench:plain');
  const multi = clients[0]!.getMultiLock(...members('bench:multi', 3));
  const red = clients[0]!.getRedLock(...members('bench:red', 5));
  const watchdog = (lock: Lock): Promise<void> => lock.lock();
  const leased = (lock: Lock): Promise<boolean> => lock.tryLock({ leaseTime: 10_000 });
  const rows: Row[] = [];
  // Interleaved rounds, so that machine noise falls on every case alike.
  for (let round = 0; round < 2; round++) {
    rows.push(await measure('Lock, lock()', 1, plain, watchdog));
    rows.push(await measure('MultiLock, lock()', 3, multi, watchdog));
    rows.push(await measure('RedLock, lock()', 5, red, watchdog));
    rows.push(await measure('3 Locks one after another, lock()', 3, sequential(members('bench:seq3', 3)), watchdog));
    rows.push(await measure('5 Locks one after another, lock()', 5, sequential(members('bench:seq5', 5)), watchdog));
    rows.push(await measure('Lock, tryLock({ leaseTime })', 1, plain, leased));
    rows.push(await measure('MultiLock, tryLock({ leaseTime })', 3, multi, leased));
    rows.push(await measure('RedLock, tryLock({ leaseTime })', 5, red, leased));
  }
  const merged = new Map<string, Row>();
  for (const row of rows) {
    const into = merged.get(row.case);
    if (!into) {
      merged.set(row.case, row);
      continue;
    }
    into.acquire.push(...row.acquire);
    into.pair.push(...row.pair);
  }
  const fmt = (ms: number): string => ms.toFixed(3).padStart(8);
  console.log(
    `node ${process.version}, ${iterations} x 2 samples per case, 5 private redis-server processes on 127.0.0.1`,
  );
  console.log(`${'case'.padEnd(36)} servers  acquire p50  p99      acq+rel p50  p99   (ms)`);
  for (const row of merged.values()) {
    const acquire = [...row.acquire].sort((a, b) => a - b);
    const pair = [...row.pair].sort((a, b) => a - b);
    console.log(
      `${row.case.padEnd(36)} ${String(row.servers).padStart(7)}  ${fmt(percentile(acquire, 50))} ${fmt(percentile(acquire, 99))}   ${fmt(percentile(pair, 50))} ${fmt(percentile(pair, 99))}`,
    );
  }
} finally {
  await Promise.all(clients.map((client) => client.shutdown()));
  for (const redis of connections) redis.disconnect();
  await Promise.all(processes.map((server) => server.stop()));
}
