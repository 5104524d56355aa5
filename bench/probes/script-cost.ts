/**
 * Probe, not part of `npm run bench`: what one acquire + release costs Redis itself (INFO
 * commandstats: the time Redis spent running the commands), sent one at a time as in scenario 1.
 * Compares latchkey's two lock scripts; the same release without its LPOP (the most a "waiters
 * queued" mark in the lock hash could save when nobody is queued) and with such a mark read
 * instead (what it would really cost); scenario 1's floor scripts; and redis-semaphore's pair (a
 * plain SET NX PX, and its compare-and-delete script); two PINGs stand for the round trips alone.
 *
 *   node --import tsx bench/probes/script-cost.ts [--pairs 2000] [--repeat 15]
 *
 * The variants take turns, `repeat` times, and each one's median turn is printed.
 *
 * `--instructions` counts, instead of timing, the instructions redis-server runs per pair: each
 * variant gets its own server under `valgrind --tool=callgrind`, counted over `pairs` pairs after a
 * warm-up. Unlike a time on this shared VM, the count barely moves between runs (valgrind must be
 * installed; about 20 seconds).
 */
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { Redis } from 'ioredis';
import { findRedisServer, freePort, startRedisServer } from '../../src/cli/redis-server.js';
import { lockAcquire, lockRelease } from '../../src/scripts/index.js';
import { DELETE_IF_OWNER, pairsUntil, SET_IF_ABSENT } from '../scenarios/single.js';
import { median } from '../stats.js';

const run = promisify(execFile);
const { values } = parseArgs({
  options: {
    pairs: { type: 'string', default: '2000' },
    repeat: { type: 'string', default: '15' },
    instructions: { type: 'boolean', default: false },
  },
});
const pairs = Number(values.pairs);

const RELEASE_WITHOUT_LPOP = `local holds = tonumber(redis.call('hget', KEYS[1], ARGV[1]))
if not holds then return -1 end
if ARGV[3] ~= 'all' and holds > 1 then return redis.call('hincrby', KEYS[1], ARGV[1], -1) end
redis.call('del', KEYS[1])
return 0`;

/**
 * The release a "queued" mark in the lock hash would allow (tried, not shipped): it reads the mark
 * with the hold count and skips the LPOP when nobody queued. (Unmarked here, as with nobody queued.)
 */
const RELEASE_READING_A_MARK = `local held = redis.call('hmget', KEYS[1], ARGV[1], 'queued')
local holds = tonumber(held[1])
if not holds then return -1 end
if ARGV[3] ~= 'all' and holds > 1 then return redis.call('hincrby', KEYS[1], ARGV[1], -1) end
redis.call('del', KEYS[1])
if held[2] then redis.call('lpop', KEYS[2]) end
return 0`;

const keys = ['probe:{x}:lock', 'probe:{x}:lock-queue', 'probe:{x}:lock-waiters'];
const owner = 'client-id-of-sixteen:owner-twelve';

/**
 * One command of a pair: `prepare` loads what it needs once per turn; `command` names what the
 * client sends, the only stat counted (a script's EVALSHA time already holds the commands it
 * calls, which INFO lists again under their own names).
 */
interface Send {
  command: string;
  prepare: (redis: Redis) => Promise<() => Promise<unknown>>;
}

const script = (source: string, scriptKeys: readonly string[], args: readonly (string | number)[]): Send => ({
  command: 'evalsha',
  prepare: async (redis) => {
    const sha = (await redis.script('LOAD', source)) as string;
    return () => redis.evalsha(sha, scriptKeys.length, ...scriptKeys, ...args);
  },
});

const acquire = script(lockAcquire.source, keys, [owner, 30_000]);
const releaseArgs = [owner, 'probe:released'];
const ping: Send = { command: 'ping', prepare: (redis) => Promise.resolve(() => redis.ping()) };
const variants: Record<string, readonly [take: Send, give: Send]> = {
  'two PINGs': [ping, ping],
  'latchkey lock scripts': [acquire, script(lockRelease.source, keys, releaseArgs)],
  'release without LPOP': [acquire, script(RELEASE_WITHOUT_LPOP, keys, releaseArgs)],
  'release reading a mark': [acquire, script(RELEASE_READING_A_MARK, keys, releaseArgs)],
  'floor scripts': [
    script(SET_IF_ABSENT, ['probe:floor'], [owner, 30_000]),
    script(DELETE_IF_OWNER, ['probe:floor'], [owner]),
  ],
  'redis-semaphore': [
    { command: 'set', prepare: (redis) => Promise.resolve(() => redis.set('probe:rsem', owner, 'PX', 30_000, 'NX')) },
    script(DELETE_IF_OWNER, ['probe:rsem'], [owner]),
  ],
};

/** µs Redis spent since the last RESETSTAT on the commands the client sent (`sent`), not those scripts called. */
function commandTime(info: string, sent: ReadonlySet<string>): number {
  let usec = 0;
  for (const [, command, spent] of info.matchAll(/cmdstat_([a-z|]+):calls=\d+,usec=(\d+)/g)) {
    if (sent.has(command ?? '')) usec += Number(spent);
  }
  return usec;
}

type Ready = readonly [take: () => Promise<unknown>, give: () => Promise<unknown>];

async function ready(redis: Redis, pair: readonly [Send, Send]): Promise<Ready> {
  return [await pair[0].prepare(redis), await pair[1].prepare(redis)];
}

/** Sends `count` pairs one command at a time, as scenario 1 does. */
async function runPairs([take, give]: Ready, count: number): Promise<void> {
  let left = count;
  await pairsUntil(take, give, () => left-- === 0);
}

/** Instructions redis-server runs per pair of `pair`, on a server of its own under callgrind. */
async function instructionsPerPair(pair: readonly [Send, Send]): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'latchkey-callgrind-'));
  const out = join(dir, 'callgrind.out');
  const port = await freePort();
  const serverArgs = [findRedisServer(), '--port', String(port), '--bind', '127.0.0.1'];
  serverArgs.push('--save', '', '--appendonly', 'no', '--dir', dir);
  const server = spawn('valgrind', ['--tool=callgrind', `--callgrind-out-file=${out}`, ...serverArgs], {
    stdio: 'ignore',
  });
  const exited = new Promise((resolve) => server.once('exit', resolve));
  // Retries until valgrind has the server listening.
  const redis = new Redis({ port, retryStrategy: () => 100 });
  redis.on('error', () => undefined);
  const control = (flag: string): Promise<unknown> => run('callgrind_control', [flag, String(server.pid)]);
  const died = exited.then(() => {
    throw new Error(`redis-server under valgrind exited before it served on port ${port}`);
  });
  try {
    await Promise.race([redis.ping(), died]);
    const sends = await ready(redis, pair);
    await runPairs(sends, 200);
    await control('--zero');
    await runPairs(sends, pairs);
    await control('--dump');
    // The dump goes to "<out>.1"; its summary counts every instruction since --zero.
    const summary = /^summary: (\d+)$/m.exec(readFileSync(`${out}.1`, 'utf8'));
    if (!summary) throw new Error(`no summary in callgrind's dump ${out}.1`);
    return Number(summary[1]) / pairs;
  } finally {
    redis.disconnect();
    server.kill('SIGKILL');
    await exited;
    rmSync(dir, { recursive: true, force: true });
  }
}

async function countInstructions(): Promise<void> {
  await run('valgrind', ['--version']).catch((error: Error) => {
    throw new Error(`--instructions needs valgrind (Debian package valgrind): ${error.message}`);
  });
  for (const [name, pair] of Object.entries(variants)) {
    const count = Math.round(await instructionsPerPair(pair)).toLocaleString('en-US');
    console.log(`${name.padEnd(22)} ${count.padStart(7)} instructions of Redis per pair`);
  }
}

async function timeCommands(): Promise<void> {
  const server = await startRedisServer();
  const redis = new Redis({ port: server.port });
  const costs = new Map(Object.keys(variants).map((name) => [name, [] as number[]]));
  try {
    for (let repeat = 0; repeat < Number(values.repeat); repeat++) {
      for (const [name, pair] of Object.entries(variants)) {
        const sends = await ready(redis, pair);
        await redis.config('RESETSTAT');
        await runPairs(sends, pairs);
        const sent = new Set(pair.map((send) => send.command));
        costs.get(name)!.push(commandTime(await redis.info('commandstats'), sent) / pairs);
      }
    }
    for (const [name, turns] of costs)
      console.log(`${name.padEnd(22)} ${median(turns).toFixed(2)} µs of Redis per pair`);
  } finally {
    await redis.quit();
    await server.stop();
  }
}

await (values.instructions ? countInstructions() : timeCommands());
