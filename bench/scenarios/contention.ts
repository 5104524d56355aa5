/**
 * Scenario 3: worker processes contending for one key, beside the hand-over ring they are read against.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Redis } from 'ioredis';
import { contentionStats, mean, percentile, sharedNow, type ContentionStats, type Interval } from '../stats.js';
import { HAND_OVER_RING } from '../names.js';
import type { AcquiredBy, DoneMessage, ProbeMessage, RunMessage } from '../worker.js';

/**
 * One process to another through Redis pub/sub, after the listener sat idle for `spacingMs`: the
 * least a hand-over between processes costs after a hold of that length (the releasing process
 * tells Redis, Redis tells the next one: the same two hops).
 */
export interface NotificationFloor {
  spacingMs: number;
  samples: number;
  p50: number;
  p99: number;
  mean: number;
}

export interface ContentionResult extends ContentionStats {
  library: string;
  workers: number;
  holdMs: number;
  /** Acquire calls the library gave up on (and the worker asked again). */
  failures: number;
  /** Waits still unanswered when the run was cut. */
  unanswered: number;
  /** latchkey rows: how the acquisitions of the whole run (warm-up to cut) came. */
  handOvers?: HandOverCount;
}

/** latchkey's hand-overs in one run of scenario 3. */
export interface HandOverCount extends AcquiredBy {
  /** Hand-over messages Redis published (each release that found a waiter sends one). */
  messages: number;
}

/** SPUBLISH calls since CONFIG RESETSTAT, those run inside scripts included. */
async function publishes(admin: Redis): Promise<number> {
  const info = await admin.info('commandstats');
  return Number(/cmdstat_spublish:calls=(\d+)/.exec(info)?.[1] ?? 0);
}

/** How long the workers contend before the measured window opens. */
const WARM_UP_MS = 500;

const WORKER = fileURLToPath(new URL('../worker.ts', import.meta.url));

/** Forked worker processes, started once and reused for every run of scenario 3. */
export class WorkerPool {
  private constructor(private readonly children: ChildProcess[]) {}

  static async start(size: number): Promise<WorkerPool> {
    const children = Array.from({ length: size }, () =>
      fork(WORKER, [], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }),
    );
    await Promise.all(
      children.map(
        (child) =>
          new Promise<void>((resolve, reject) => {
            child.once('message', () => resolve());
            child.once('exit', (code) => reject(new Error(`bench worker exited (${code}) before it was ready`)));
          }),
      ),
    );
    return new WorkerPool(children);
  }

  /**
   * Runs `workers` of the pool against one lock and gathers their intervals. With `admin` (a
   * connection to the same server), a latchkey row also counts its hand-over messages: the run
   * must then be the only one publishing on that server.
   */
  async run(
    library: string,
    workers: number,
    holdMs: number,
    port: number,
    windowMs: number,
    graceMs: number,
    admin?: Redis,
  ): Promise<ContentionResult> {
    const counting = admin !== undefined && library.startsWith('latchkey');
    if (counting) await admin.config('RESETSTAT');
    // The workers start asking WARM_UP_MS before the window opens: what is measured is the steady
    // state, not each library's first scripts loading (NOSCRIPT), first subscriptions and cold JIT.
    const asking = sharedNow() + 200;
    const start = asking + WARM_UP_MS;
    const end = start + windowMs;
    const cutoff = end + graceMs;
    const lockName = `bench:contended:${library}:${workers}:${holdMs}:${Math.round(start)}`;
    const replies = this.children.slice(0, workers).map((child, worker) => {
      const done = new Promise<DoneMessage>((resolve) => {
        const onMessage = (message: DoneMessage): void => {
          if (message.type !== 'done') return;
          child.off('message', onMessage);
          resolve(message);
        };
        child.on('message', onMessage);
      });
      const message: RunMessage = {
        type: 'run',
        worker,
        workers,
        library,
        lockName,
        port,
        holdMs,
        start: asking,
        end,
        cutoff,
      };
      child.send(message);
      return done;
    });
    const results = await Promise.all(replies);
    const intervals: Interval[] = results.flatMap((result) => result.intervals);
    const pending = results.flatMap((result) => result.pending);
    const stats = contentionStats(intervals, pending, workers, start, end);
    // For profiling a run: BENCH_DUMP=dir writes every interval of every run there.
    if (process.env.BENCH_DUMP)
      writeFileSync(
        join(process.env.BENCH_DUMP, `${lockName.replace(/[^\w.-]+/g, '_')}.json`),
        JSON.stringify(intervals),
      );
    const failures = results.reduce((sum, result) => sum + result.failures, 0);
    const row: ContentionResult = { library, workers, holdMs, ...stats, failures, unanswered: pending.length };
    if (counting) {
      const sum = (field: keyof AcquiredBy): number =>
        results.reduce((total, result) => total + (result.acquired?.[field] ?? 0), 0);
      row.handOvers = {
        messages: await publishes(admin),
        free: sum('free'),
        byMessage: sum('byMessage'),
        byReply: sum('byReply'),
      };
    }
    return row;
  }

  /** Measures PUBLISH → delivery in another process, between two pool workers, on the shared clock. */
  async notificationFloor(port: number, count: number, spacingMs: number): Promise<NotificationFloor> {
    const [publisher, listener] = this.children as [ChildProcess, ChildProcess];
    const reply = <T>(child: ChildProcess, type: string): Promise<T> =>
      new Promise((resolve) => {
        const onMessage = (message: { type: string }): void => {
          if (message.type !== type) return;
          child.off('message', onMessage);
          resolve(message as T);
        };
        child.on('message', onMessage);
      });
    const channel = `bench:probe:${Date.now()}`;
    const start = sharedNow() + 300;
    const listening = reply(listener, 'listening');
    const probed = reply<{ latencies: number[] }>(listener, 'probed');
    const probe = { type: 'probe', port, channel, count, start, spacingMs } as const;
    listener.send({ ...probe, role: 'listen' } satisfies ProbeMessage);
    await listening;
    const published = reply(publisher, 'probed');
    publisher.send({ ...probe, role: 'publish' } satisfies ProbeMessage);
    const [{ latencies }] = await Promise.all([probed, published]);
    return {
      spacingMs,
      samples: latencies.length,
      p50: percentile(latencies, 50),
      p99: percentile(latencies, 99),
      mean: mean(latencies),
    };
  }

  async stop(): Promise<void> {
    await Promise.all(
      this.children.map(
        (child) =>
          new Promise<void>((resolve) => {
            if (child.exitCode !== null) return resolve();
            child.once('exit', () => resolve());
            child.send({ type: 'exit' });
          }),
      ),
    );
  }
}

export interface ContentionOptions {
  readonly workers: readonly number[];
  readonly holds: readonly number[];
  readonly windowMs: number;
  readonly graceMs: number;
  /** Notification floor samples per hold. */
  readonly probes: number;
  /** Runs of the hand-over ring per configuration: 2 (before and after the libraries) or 1. */
  readonly rings: number;
}

/**
 * Scenario 3 on `pool`: the notification floor per hold, then per configuration the hand-over ring
 * and `libraries` (names), counted on `admin` (a connection to the server on `port`).
 */
export async function contentionScenario(
  pool: WorkerPool,
  port: number,
  admin: Redis,
  libraries: readonly string[],
  options: ContentionOptions,
  progress: (line: string) => void,
): Promise<{ contention: ContentionResult[]; floors: NotificationFloor[] }> {
  const contention: ContentionResult[] = [];
  const floors: NotificationFloor[] = [];
  for (const holdMs of options.holds) {
    const floor = await pool.notificationFloor(port, options.probes, holdMs);
    floors.push(floor);
    progress(
      `  notification floor after ${holdMs} ms idle (SPUBLISH to another process): ` +
        `p50 ${floor.p50.toFixed(2)} ms, mean ${floor.mean.toFixed(2)} ms, p99 ${floor.p99.toFixed(2)} ms`,
    );
  }
  for (const workers of options.workers)
    for (const holdMs of options.holds) {
      // The hand-over ring (what a lock that never lets the releaser barge can do at best here)
      // runs before and after the libraries, so that a moment of noise on this shared machine
      // does not set the bound alone; quick runs measure it once.
      const after = options.rings > 1 ? [HAND_OVER_RING] : [];
      for (const name of [HAND_OVER_RING, ...libraries, ...after]) {
        const result = await pool.run(name, workers, holdMs, port, options.windowMs, options.graceMs, admin);
        contention.push(result);
        const handOvers = result.handOvers
          ? `, hand-overs ${result.handOvers.messages} (${result.handOvers.byMessage} by message)`
          : '';
        progress(
          `  W=${workers} hold ${holdMs} ms ${name}: ${Math.round(result.acquisitionsPerSec)} acq/s, ` +
            `util ${result.utilisation.toFixed(2)}, wait p99 ${result.waitP99.toFixed(1)} ms, max ${result.waitMax.toFixed(1)} ms, ` +
            `Jain ${result.jain.toFixed(3)}, overlaps ${result.overlaps}${handOvers}`,
        );
      }
    }
  return { contention, floors };
}
