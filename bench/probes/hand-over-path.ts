/**
 * Probe, not part of `npm run bench`: where a hand-over's time goes in scenario 3 (W processes
 * contending for one latchkey Lock, holding it 1 ms). Each worker times, on its own clock:
 *   - unlock() called -> latchkey's EVALSHA reaches ioredis -> ioredis writes it to the socket;
 *   - the hand-over message reaches the subscriber socket -> ioredis emits it -> lock() resolves.
 * Meanwhile Redis logs every command (SLOWLOG at 0 µs), so the run also says how long Redis spent
 * running each lock script (the hand-over's PUBLISH included). Needs `npm run build` first (latchkey
 * runs from dist/, as in the bench).
 *
 *   node --import tsx bench/probes/hand-over-path.ts [--workers 8] [--seconds 6]
 */
import { fork } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { startRedisServer } from '../../src/cli/redis-server.js';
import { lockAcquire, lockRelease } from '../../src/scripts/index.js';
import { latchkeyLock } from '../libraries.js';
import { median } from '../stats.js';

const { values } = parseArgs({
  options: {
    workers: { type: 'string', default: '8' },
    seconds: { type: 'string', default: '6' },
    child: { type: 'string' },
  },
});

/** What one worker measured, in µs per hand-over (medians over its acquisitions after warm-up). */
interface WorkerTimes {
  readonly acquisitions: number;
  readonly unlockToEvalsha: number;
  readonly evalshaToWrite: number;
  readonly messageDataToEmit: number;
  readonly emitToLocked: number;
}

/** Skipped acquisitions at the start of each worker: its code is still being compiled. */
const WARM_UP = 50;

async function worker(port: number, ms: number): Promise<WorkerTimes> {
  const redis = new Redis({ port });
  let dataAt = 0;
  let emittedAt = 0;
  const duplicate = redis.duplicate.bind(redis);
  // latchkey's subscriber connection is the one it makes with duplicate(): time its traffic too.
  redis.duplicate = (...args: Parameters<Redis['duplicate']>) => {
    const subscriber = duplicate(...args);
    subscriber.once('connect', () => subscriber.stream.prependListener('data', () => (dataAt = performance.now())));
    subscriber.prependListener('message', () => (emittedAt = performance.now()));
    return subscriber;
  };
  let evalshaAt = 0;
  let writeAt = 0;
  const evalsha = redis.evalsha.bind(redis) as (...args: unknown[]) => Promise<unknown>;
  (redis as unknown as { evalsha: typeof evalsha }).evalsha = (...args) => {
    evalshaAt = performance.now();
    return evalsha(...args);
  };
  const session = latchkeyLock.open(redis);
  const lock = session.lock('probe:hand-over');
  await redis.ping();
  const write = redis.stream.write.bind(redis.stream) as (...args: unknown[]) => boolean;
  redis.stream.write = (...args: unknown[]): boolean => {
    writeAt = performance.now();
    return write(...args);
  };
  const times = {
    unlockToEvalsha: [] as number[],
    evalshaToWrite: [] as number[],
    data: [] as number[],
    emit: [] as number[],
  };
  const end = Date.now() + ms;
  let acquisitions = 0;
  try {
    while (Date.now() < end) {
      dataAt = 0;
      await lock.acquire();
      const locked = performance.now();
      // Only acquisitions that came by a hand-over message (not the uncontended first try).
      if (acquisitions > WARM_UP && dataAt > 0) {
        times.data.push((emittedAt - dataAt) * 1000);
        times.emit.push((locked - emittedAt) * 1000);
      }
      await sleep(1);
      const unlocking = performance.now();
      writeAt = 0;
      const released = lock.release();
      if (acquisitions > WARM_UP && writeAt > 0) {
        times.unlockToEvalsha.push((evalshaAt - unlocking) * 1000);
        times.evalshaToWrite.push((writeAt - evalshaAt) * 1000);
      }
      await released;
      acquisitions++;
    }
  } finally {
    await session.close();
    redis.disconnect();
  }
  return {
    acquisitions,
    unlockToEvalsha: median(times.unlockToEvalsha),
    evalshaToWrite: median(times.evalshaToWrite),
    messageDataToEmit: median(times.data),
    emitToLocked: median(times.emit),
  };
}

/** SLOWLOG entries as redis returns them: id, time, µs, [command, ...args], ... */
type SlowlogEntry = [number, number, number, string[], ...unknown[]];

async function coordinate(workers: number, seconds: number): Promise<void> {
  const server = await startRedisServer();
  const redis = new Redis({ port: server.port });
  const spent = new Map<string, number[]>();
  const scriptNames = new Map([
    [lockAcquire.sha, 'lock/acquire script'],
    [lockRelease.sha, 'lock/release script'],
  ]);
  try {
    await redis.config('SET', 'slowlog-log-slower-than', '0');
    await redis.config('SET', 'slowlog-max-len', '100000');
    const children = Array.from({ length: workers }, () =>
      fork(fileURLToPath(import.meta.url), ['--child', String(server.port), '--seconds', String(seconds)], {
        execArgv: ['--import', 'tsx'],
      }),
    );
    const results = children.map(
      (child) =>
        new Promise<WorkerTimes>((resolve, reject) => {
          child.once('message', (message) => resolve(message as WorkerTimes));
          child.once('error', reject);
          child.once('exit', (code) => (code === 0 ? undefined : reject(new Error(`worker exited with ${code}`))));
        }),
    );
    let running = true;
    void Promise.allSettled(results).then(() => (running = false));
    while (running) {
      await sleep(500);
      const entries = (await redis.slowlog('GET', 100000)) as SlowlogEntry[];
      await redis.slowlog('RESET');
      for (const [, , micros, [command = '', sha = '']] of entries) {
        const name = command.toLowerCase() === 'evalsha' ? scriptNames.get(sha) : undefined;
        if (name) spent.set(name, [...(spent.get(name) ?? []), micros]);
      }
    }
    const times = await Promise.all(results);
    const across = (pick: (own: WorkerTimes) => number): string => median(times.map(pick)).toFixed(0);
    console.log(
      `${workers} workers, hold 1 ms, ${seconds} s: ${times.reduce((sum, own) => sum + own.acquisitions, 0)} acquisitions`,
    );
    console.log("µs, median of the workers' medians:");
    console.log(`  releasing process: unlock() -> EVALSHA into ioredis  ${across((own) => own.unlockToEvalsha)}`);
    console.log(`  releasing process: EVALSHA -> socket write (ioredis)  ${across((own) => own.evalshaToWrite)}`);
    console.log(`  woken process: message on socket -> emitted (ioredis) ${across((own) => own.messageDataToEmit)}`);
    console.log(`  woken process: emitted -> lock() resolved             ${across((own) => own.emitToLocked)}`);
    console.log('µs Redis spent per call (SLOWLOG), p50:');
    for (const [name, micros] of spent) console.log(`  ${name.padEnd(20)} ${median(micros)} (${micros.length} calls)`);
  } finally {
    await redis.quit();
    await server.stop();
  }
}

if (values.child !== undefined) {
  const times = await worker(Number(values.child), Number(values.seconds) * 1000);
  process.send?.(times);
  process.disconnect?.();
} else {
  await coordinate(Number(values.workers), Number(values.seconds));
}
