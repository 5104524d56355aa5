/**
 * `npm run bench`: latchkey next to redlock and redis-semaphore on one private redis-server.
 * Prints a table, writes bench/results/<date>.json and .svg. `--quick` is a smoke run of a few
 * seconds; `--out DIR` writes elsewhere (quick runs default to the system's temp directory).
 * bench/README.md explains the method and the targets.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { startRedisServer, type RedisProcess } from '../harness/redis-process.js';
import { chart } from './chart.js';
import { compareRuns } from './compare.js';
import { libraries, type BenchLibrary } from './libraries.js';
import { costLibraries, singleClientLibraries } from './primitives.js';
import { renderTable, type BenchResults } from './report.js';
import { renderSummary } from './summary.js';
import { checkTargets } from './targets.js';
import { contentionScenario, WorkerPool } from './scenarios/contention.js';
import { multiServer } from './scenarios/multi.js';
import { lossDetection, waiterAfterExpiry, type DetectionRun } from './scenarios/detection.js';
import { concurrentTasks, singleClient } from './scenarios/single.js';
import { watchdogCost, watchdogOnCluster, type WatchdogResult } from './scenarios/watchdog.js';
import { redisCost } from './scenarios/redis-cost.js';
import { heldAtScale } from './scenarios/scale.js';
import { waitersAtScale } from './scenarios/waiters.js';
import { startBenchCluster } from './cluster.js';

const FULL = {
  // Short slices, many rounds: this shared VM drifts by tens of percent within a second, and each
  // library should be compared with the others under the same drift. 75 paired rounds put the
  // median ratio within about 1-2% (its 95% interval is printed with the targets).
  throughput: { sliceMs: 40, rounds: 75 },
  tasks: 64,
  workers: [8, 16],
  holds: [1, 5],
  windowMs: 5_000,
  graceMs: 5_000,
  held: 10_000,
  watchdogTimeout: 3_000,
  periods: 5,
  iterations: 1_000,
  // At the client's default watchdogTimeout (30 s): one renewal period of faults, then up to one more.
  detection: { perFault: 200, controls: 50, watchdogTimeout: undefined, waiterTrials: 50 },
  // A few thousand pairs per contestant and mode, in 3 rotating rounds.
  cost: { pairs: 3_000, rounds: 3, clients: 4, warmUp: 20, capMs: 15_000 },
  scaleHeld: { sizes: [10_000, 100_000], peerLocks: 100_000, watchdogTimeout: 10_000, periods: 2, peerLeaseMs: 10_000 },
  scaleWaiters: { sizes: [1_000, 10_000], peerWaiters: 10_000, layouts: [1, 100], capMs: 10_000, askMs: 1_000 },
};
const QUICK = {
  throughput: { sliceMs: 60, rounds: 1 },
  tasks: 8,
  workers: [2],
  holds: [1],
  windowMs: 300,
  graceMs: 1_000,
  held: 300,
  watchdogTimeout: 600,
  periods: 1,
  iterations: 20,
  detection: { perFault: 10, controls: 5, watchdogTimeout: 600, waiterTrials: 3 },
  cost: { pairs: 40, rounds: 1, clients: 3, warmUp: 2, capMs: 3_000 },
  scaleHeld: { sizes: [100, 1_000], peerLocks: 1_000, watchdogTimeout: 600, periods: 1, peerLeaseMs: 600 },
  scaleWaiters: { sizes: [50, 500], peerWaiters: 50, layouts: [1, 10], capMs: 5_000, askMs: 100 },
};

const { values } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    out: { type: 'string' },
    /** e.g. `--scenarios 1,3`: run only these (for profiling; the report then has only these). */
    scenarios: { type: 'string', default: '1,2,3,4,5,6,7,8' },
    /** e.g. `--libraries "latchkey Lock,redlock"`. */
    libraries: { type: 'string' },
    /** e.g. `--workers 16 --holds 1`: narrow scenario 3. */
    workers: { type: 'string' },
    holds: { type: 'string' },
    /** `--render FILE.json`: print the table and rewrite the SVG of an earlier run, measure nothing. */
    render: { type: 'string' },
    /** With `--render`: print only the README's summary tables. */
    summary: { type: 'boolean', default: false },
    /** `--compare OLD.json,NEW.json`: the figures that show a regression, side by side; measures nothing. */
    compare: { type: 'string' },
  },
});
const base = values.quick ? QUICK : FULL;
const numbers = (list: string | undefined, fallback: number[]): number[] =>
  list ? list.split(',').map(Number) : fallback;
const config = { ...base, workers: numbers(values.workers, base.workers), holds: numbers(values.holds, base.holds) };
const selected = new Set(numbers(values.scenarios, [1, 2, 3, 4, 5, 6, 7, 8]));
const outDir = values.out ?? (values.quick ? tmpdir() : fileURLToPath(new URL('./results/', import.meta.url)));
const progress = (line: string): void => void process.stderr.write(`${line}\n`);

function connect(server: RedisProcess): Redis {
  const redis = new Redis({ port: server.port, host: server.host });
  redis.on('error', () => undefined);
  return redis;
}

/** Scenario 4's Cluster row: the same held locks spread over a private Cluster of 3 primaries. */
async function clusterWatchdog(): Promise<WatchdogResult> {
  const cluster = await startBenchCluster(3);
  try {
    const row = await watchdogOnCluster(
      cluster.client,
      cluster.admins,
      config.held,
      config.watchdogTimeout,
      config.periods,
    );
    const perNode = (row.nodes ?? []).map((node) => `${node.commandsPerPeriod.toFixed(1)} for ${node.locks}`);
    progress(`  ${row.library}: commands per period per primary: ${perNode.join(', ')} locks (budget ${row.budget})`);
    return row;
  } finally {
    await cluster.stop();
  }
}

async function main(): Promise<void> {
  const started = Date.now();
  const servers: RedisProcess[] = [await startRedisServer()];
  const connections: Redis[] = [];
  const open = (server: RedisProcess): Redis => {
    const redis = connect(server);
    connections.push(redis);
    return redis;
  };
  let pool: WorkerPool | undefined;
  try {
    const redis = open(servers[0]!);
    const info = await redis.info('server');
    const wanted = values.libraries?.split(',');
    const pick = (list: BenchLibrary[]): BenchLibrary[] =>
      list.filter((library) => !wanted || wanted.includes(library.name));
    const libs = pick(libraries());
    const missing: string[] = [];
    progress(
      `redis-server ${/redis_version:(\S+)/.exec(info)?.[1] ?? '?'} on port ${servers[0]!.port}; libraries: ${libs.map((l) => l.name).join(', ')}`,
    );

    progress('[1/8] one client, acquire + release loop');
    const single = selected.has(1)
      ? await singleClient(redis, pick(singleClientLibraries()), config.throughput, progress)
      : [];
    progress(`[2/8] ${config.tasks} concurrent tasks on ${config.tasks} keys`);
    const concurrent = selected.has(2)
      ? await concurrentTasks(redis, libs, config.tasks, config.throughput, progress)
      : [];

    progress(`[3/8] contention: starting ${Math.max(...config.workers)} worker processes`);
    pool = selected.has(3) ? await WorkerPool.start(Math.max(...config.workers)) : undefined;
    const { contention, floors } = pool
      ? await contentionScenario(
          pool,
          servers[0]!.port,
          redis,
          libs.map((library) => library.name),
          { ...config, probes: values.quick ? 20 : 400, rings: values.quick ? 1 : 2 },
          progress,
        )
      : { contention: [], floors: [] };
    await pool?.stop();
    pool = undefined;

    progress(`[4/8] watchdog: ${config.held} held locks, watchdogTimeout ${config.watchdogTimeout} ms`);
    const watchdog = !selected.has(4)
      ? []
      : await watchdogCost(
          () => open(servers[0]!),
          redis,
          config.held,
          config.watchdogTimeout,
          config.periods,
          progress,
        );
    if (selected.has(4)) watchdog.push(await clusterWatchdog());

    progress('[5/8] MultiLock over 3 and RedLock over 5 servers');
    if (selected.has(5)) servers.push(...(await Promise.all(Array.from({ length: 4 }, () => startRedisServer()))));
    const multi = selected.has(5)
      ? await multiServer([redis, ...servers.slice(1).map(open)], config.iterations, config.throughput)
      : { latency: [], throughput: [] };
    for (const row of multi.latency)
      progress(
        `  ${row.library} (${row.servers} servers): p50 ${row.acquireP50.toFixed(2)} ms, p99 ${row.acquireP99.toFixed(2)} ms`,
      );
    for (const row of multi.throughput)
      progress(`  ${row.library} (${row.servers} servers): ${Math.round(row.pairsPerSec)} pairs/s`);

    const detection: DetectionRun[] = [];
    const { perFault, controls, watchdogTimeout } = config.detection;
    progress(`[6/8] lost-lock detection: ${perFault} locks per fault, watchdogTimeout ${watchdogTimeout ?? 'default'}`);
    for (const how of selected.has(6) ? (['default', 'renewal'] as const) : []) {
      const run = await lossDetection(
        () => open(servers[0]!),
        how,
        { perFault, controls, ...(watchdogTimeout === undefined ? {} : { watchdogTimeout }) },
        progress,
      );
      if (!run) {
        missing.push("scenario 6 with `lossDetection: 'renewal'` (no such LockClient option yet)");
        continue;
      }
      detection.push(run);
      for (const row of run.rows)
        progress(
          `  ${how} ${row.fault}: p50 ${row.p50.toFixed(1)} ms, p99 ${row.p99.toFixed(1)} ms, max ${row.max.toFixed(1)} ms, ` +
            `${row.detected} of ${row.locks} detected`,
        );
    }
    const waiterWake = selected.has(6)
      ? await waiterAfterExpiry(() => open(servers[0]!), config.detection.waiterTrials)
      : undefined;
    if (waiterWake)
      progress(
        `  a waiter behind a stopped holder, from the key's expiry: p50 ${waiterWake.p50.toFixed(1)} ms, ` +
          `p99 ${waiterWake.p99.toFixed(1)} ms, max ${waiterWake.max.toFixed(1)} ms`,
      );

    // Scenarios 7 and 8 open and close connections of their own: none is kept for the end.
    const fresh = (): Redis => connect(servers[0]!);
    progress(
      `[7/8] what a lock costs Redis: ${config.cost.pairs} pairs per contestant, uncontended and on ${config.cost.clients} clients`,
    );
    const redisCostRows = selected.has(7)
      ? await redisCost(fresh, redis, pick(costLibraries()), config.cost, progress)
      : [];
    progress(
      `[8/8] scale: ${config.scaleHeld.sizes.join(' and ')} held locks, ${config.scaleWaiters.sizes.join(' and ')} waiters`,
    );
    const held = selected.has(8) ? await heldAtScale(fresh, redis, config.scaleHeld, progress) : [];
    const waiters = selected.has(8) ? await waitersAtScale(fresh, redis, config.scaleWaiters, progress) : [];

    const results: BenchResults = {
      date: new Date().toISOString(),
      quick: values.quick,
      machine: {
        cpus: cpus().length,
        cpu: cpus()[0]?.model ?? '?',
        node: process.version,
        redis: /redis_version:(\S+)/.exec(info)?.[1] ?? '?',
      },
      durationSec: 0,
      single,
      concurrent,
      contention,
      notificationFloors: floors,
      watchdog,
      multi: multi.latency,
      multiThroughput: multi.throughput,
      detection,
      ...(waiterWake ? { waiterWake } : {}),
      redisCost: redisCostRows,
      held,
      waiters,
      missing,
    };
    results.targets = checkTargets(results);
    results.durationSec = Math.round((Date.now() - started) / 100) / 10;
    mkdirSync(outDir, { recursive: true });
    const base = join(outDir, results.date.slice(0, 10) + (values.quick ? '-quick' : ''));
    writeFileSync(`${base}.json`, `${JSON.stringify(results, null, 2)}\n`);
    writeFileSync(`${base}.svg`, chart(results));
    process.stdout.write(`${renderTable(results)}\n`);
    process.stdout.write(`results: ${base}.json\nchart: ${base}.svg\n`);
  } finally {
    await pool?.stop();
    for (const connection of connections) connection.disconnect();
    await Promise.all(servers.map((server) => server.stop(true)));
  }
}

function render(file: string): void {
  const results = JSON.parse(readFileSync(file, 'utf8')) as BenchResults;
  if (values.summary) return void process.stdout.write(`${renderSummary(results)}\n`);
  writeFileSync(file.replace(/\.json$/, '.svg'), chart(results));
  process.stdout.write(`${renderTable(results)}\n`);
}

function compare(files: string): void {
  const [before, after] = files.split(',').map((file) => JSON.parse(readFileSync(file, 'utf8')) as BenchResults);
  if (!before || !after) throw new Error('--compare takes two files: OLD.json,NEW.json');
  process.stdout.write(`${compareRuns(before, after)}\n`);
}

(values.compare
  ? Promise.resolve(compare(values.compare))
  : values.render
    ? Promise.resolve(render(values.render))
    : main()
).catch((error: unknown) => {
  process.stderr.write(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
});
