/**
 * Probe, not part of `npm run bench`: what one acquire + release costs Redis itself (INFO
 * commandstats: the time Redis spent running the commands), sent one at a time as in scenario 1.
 * Compares latchkey's two lock scripts; the same release without its LPOP (the most a "waiters
 * queued" mark in the lock hash could save when nobody is queued) and with such a mark read
 * instead (what it would really cost); scenario 1's floor scripts; and redis-semaphore's pair (a
 * plain SET NX PX, and its compare-and-delete script).
 *
 *   node --import tsx bench/probes/script-cost.ts [--pairs 2000] [--repeat 15]
 *
 * The variants take turns, `repeat` times, and each one's median turn is printed.
 */
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { startRedisServer } from '../../src/cli/redis-server.js';
import { lockAcquire, lockRelease } from '../../src/scripts/index.js';
import { DELETE_IF_OWNER, SET_IF_ABSENT } from '../scenarios/single.js';
import { median } from '../stats.js';

const { values } = parseArgs({
  options: { pairs: { type: 'string', default: '2000' }, repeat: { type: 'string', default: '15' } },
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
const variants: Record<string, readonly [take: Send, give: Send]> = {
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

const server = await startRedisServer();
const redis = new Redis({ port: server.port });
const costs = new Map(Object.keys(variants).map((name) => [name, [] as number[]]));
try {
  for (let repeat = 0; repeat < Number(values.repeat); repeat++) {
    for (const [name, pair] of Object.entries(variants)) {
      const take = await pair[0].prepare(redis);
      const give = await pair[1].prepare(redis);
      await redis.config('RESETSTAT');
      for (let i = 0; i < pairs; i++) {
        await take();
        await give();
      }
      costs
        .get(name)!
        .push(commandTime(await redis.info('commandstats'), new Set(pair.map((send) => send.command))) / pairs);
    }
  }
  for (const [name, turns] of costs) console.log(`${name.padEnd(22)} ${median(turns).toFixed(2)} µs of Redis per pair`);
} finally {
  await redis.quit();
  await server.stop();
}
