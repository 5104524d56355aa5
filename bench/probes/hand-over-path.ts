/**
 * Probe, not part of `npm run bench`: where a hand-over's time goes in scenario 3 (W processes
 * contending for one latchkey Lock, holding it 1 ms). Each worker times, on its own clock:
 *   - unlock() called -> its EVALSHA reaches ioredis -> ioredis writes it to the socket;
 *   - the hand-over message reaches the subscriber socket -> ioredis emits it -> lock() resolves.
 * Meanwhile Redis logs every command (SLOWLOG at 0 µs), so the run also says how long Redis spent
 * running each lock script (Redis 7 logs the commands a script calls as well: latchkey's PUBLISH
 * row is the one inside its release script, whose time includes it). With `--ring` the workers run
 * scenario 3's hand-over ring instead (one PUBLISH per hand-over, nothing else), timed the same
 * way. Needs `npm run build` first (latchkey runs from dist/, as in the bench).
 *
 *   node --import tsx bench/probes/hand-over-path.ts [--workers 8] [--seconds 6] [--ring]
 */
import { fork, type ChildProcess } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { startRedisServer } from '../../src/cli/redis-server.js';
import { lockAcquire, lockRelease } from '../../src/scripts/index.js';
import { handOverRing, latchkeyLock } from '../libraries.js';
import { median } from '../stats.js';

const { values } = parseArgs({
  options: {
    workers: { type: 'string', default: '8' },
    seconds: { type: 'string', default: '6' },
    ring: { type: 'boolean', default: false },
    child: { type: 'string' },
    seat: { type: 'string', default: '0' },
  },
});

/** What one worker measured, in µs per hand-over (medians over its acquisitions after warm-up). */
interface WorkerTimes {
  readonly acquisitions: number;
  readonly unlockToCommand: number;
  readonly commandToWrite: number;
  readonly messageDataToEmit: number;
  readonly emitToLocked: number;
}

/** Skipped acquisitions at the start of each worker: its code is still being compiled. */
const WARM_UP = 50;

async function worker(port: number, seat: number, workers: number): Promise<WorkerTimes> {
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
  // The release's command entering ioredis: latchkey's EVALSHA, or the ring's PUBLISH.
  let commandAt = 0;
  let writeAt = 0;
  const commands = redis as unknown as Record<'evalsha' | 'publish', (...args: unknown[]) => Promise<unknown>>;
  for (const name of ['evalsha', 'publish'] as const) {
    const send = commands[name].bind(redis);
    commands[name] = (...args) => {
      commandAt = performance.now();
      return send(...args);
    };
  }
  const library = values.ring ? handOverRing : latchkeyLock;
  const session = library.open(redis, { worker: seat, workers });
  const lock = session.lock('probe:hand-over');
  await redis.ping();
  const write = redis.stream.write.bind(redis.stream) as (...args: unknown[]) => boolean;
  redis.stream.write = (...args: unknown[]): boolean => {
    writeAt = performance.now();
    return write(...args);
  };
  const times = {
    unlockToCommand: [] as number[],
    commandToWrite: [] as number[],
    data: [] as number[],
    emit: [] as number[],
  };
  // All start together, once every worker listens (the ring loses a turn passed to a worker not
  // yet subscribed); a wait still open after the end is abandoned (the ring stops when one leaves).
  await sleep(300);
  const end = await new Promise<number>((resolve) => {
    process.once('message', (go: { end: number }) => resolve(go.end));
    process.send?.('ready');
  });
  const abandon = new AbortController();
  const cutoff = sleep(end + 1_000 - Date.now(), 'cut' as const, { signal: abandon.signal }).catch(() => 'cut');
  let acquisitions = 0;
  let locked = 0;
  try {
    while (Date.now() < end) {
      dataAt = 0;
      // Timed as it resolves, before anything of the race runs.
      const acquired = lock.acquire().then(() => (locked = performance.now()));
      if ((await Promise.race([acquired, cutoff])) === 'cut') break;
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
        times.unlockToCommand.push((commandAt - unlocking) * 1000);
        times.commandToWrite.push((writeAt - commandAt) * 1000);
      }
      await released;
      acquisitions++;
    }
  } finally {
    abandon.abort();
    await session.close();
    redis.disconnect();
  }
  return {
    acquisitions,
    unlockToCommand: median(times.unlockToCommand),
    commandToWrite: median(times.commandToWrite),
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
  const children: ChildProcess[] = [];
  try {
    await redis.config('SET', 'slowlog-log-slower-than', '0');
    await redis.config('SET', 'slowlog-max-len', '100000');
    const forked = Array.from({ length: workers }, (_, seat) =>
      fork(
        fileURLToPath(import.meta.url),
        ['--child', String(server.port), '--seat', String(seat), '--workers', String(workers)].concat(
          values.ring ? ['--ring'] : [],
        ),
        { execArgv: ['--import', 'tsx'] },
      ),
    );
    children.push(...forked);
    const ready = children.map((child) => new Promise((resolve) => child.once('message', resolve)));
    const results = children.map(
      (child) =>
        new Promise<WorkerTimes>((resolve, reject) => {
          child.on('message', (message) => (message === 'ready' ? undefined : resolve(message as WorkerTimes)));
          child.once('error', reject);
          child.once('exit', (code) => (code === 0 ? undefined : reject(new Error(`worker exited with ${code}`))));
        }),
    );
    // A worker that fails before it is ready ends the run instead of leaving the others waiting.
    await Promise.race([Promise.all(ready), Promise.all(results)]);
    await redis.slowlog('RESET');
    const end = Date.now() + seconds * 1000;
    for (const child of children) child.send({ end });
    let running = true;
    void Promise.allSettled(results).then(() => (running = false));
    while (running) {
      await sleep(500);
      const entries = (await redis.slowlog('GET', 100000)) as SlowlogEntry[];
      await redis.slowlog('RESET');
      for (const [, , micros, [command = '', sha = '']] of entries) {
        const sent = command.toLowerCase();
        const name = sent === 'evalsha' ? scriptNames.get(sha) : sent === 'publish' ? 'PUBLISH' : undefined;
        if (!name) continue;
        const own = spent.get(name) ?? [];
        own.push(micros);
        spent.set(name, own);
      }
    }
    const times = await Promise.all(results);
    const across = (pick: (own: WorkerTimes) => number): string => median(times.map(pick)).toFixed(0);
    console.log(
      `${values.ring ? 'hand-over ring' : 'latchkey Lock'}, ${workers} workers, hold 1 ms, ${seconds} s: ` +
        `${times.reduce((sum, own) => sum + own.acquisitions, 0)} acquisitions`,
    );
    console.log("µs, median of the workers' medians:");
    console.log(`  releasing process: release -> its command into ioredis ${across((own) => own.unlockToCommand)}`);
    console.log(`  releasing process: command -> socket write (ioredis)   ${across((own) => own.commandToWrite)}`);
    console.log(`  woken process: message on socket -> emitted (ioredis)  ${across((own) => own.messageDataToEmit)}`);
    console.log(`  woken process: emitted -> acquire resolved             ${across((own) => own.emitToLocked)}`);
    console.log('µs Redis spent per call (SLOWLOG), p50:');
    for (const [name, micros] of spent) console.log(`  ${name.padEnd(20)} ${median(micros)} (${micros.length} calls)`);
  } finally {
    for (const child of children) if (child.exitCode === null) child.kill();
    await redis.quit();
    await server.stop();
  }
}

if (values.child !== undefined) {
  const times = await worker(Number(values.child), Number(values.seat), Number(values.workers));
  process.send?.(times);
  process.disconnect?.();
} else {
  await coordinate(Number(values.workers), Number(values.seconds));
}
