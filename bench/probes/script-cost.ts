/**
 * Probe, not part of `npm run bench`: what one acquire + release costs Redis itself (INFO
 * commandstats: the time Redis spent running the commands), sent one at a time as in scenario 1.
 * Compares latchkey's two lock scripts; the same release without its LPOP (what a "waiters
 * queued" mark in the lock hash would save when nobody is queued); scenario 1's floor scripts;
 * and redis-semaphore's pair (a plain SET NX PX, and its compare-and-delete script).
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

const keys = ['probe:{x}:lock', 'probe:{x}:lock-queue', 'probe:{x}:lock-waiters'];
const owner = 'client-id-of-sixteen:owner-twelve';

/** Sends one command of a pair; `prepare` loads what it needs once per turn. */
type Send = (redis: Redis) => Promise<() => Promise<unknown>>;

const script =
  (source: string, scriptKeys: readonly string[], args: readonly (string | number)[]): Send =>
  async (redis) => {
    const sha = (await redis.script('LOAD', source)) as string;
    return () => redis.evalsha(sha, scriptKeys.length, ...scriptKeys, ...args);
  };

const acquire = script(lockAcquire.source, keys, [owner, 30_000]);
const releaseArgs = [owner, 'probe:released'];
const variants: Record<string, readonly [take: Send, give: Send]> = {
  'latchkey lock scripts': [acquire, script(lockRelease.source, keys, releaseArgs)],
  'release without LPOP': [acquire, script(RELEASE_WITHOUT_LPOP, keys, releaseArgs)],
  'floor scripts': [
    script(SET_IF_ABSENT, ['probe:floor'], [owner, 30_000]),
    script(DELETE_IF_OWNER, ['probe:floor'], [owner]),
  ],
  'redis-semaphore': [
    (redis) => Promise.resolve(() => redis.set('probe:rsem', owner, 'PX', 30_000, 'NX')),
    script(DELETE_IF_OWNER, ['probe:rsem'], [owner]),
  ],
};

/** µs Redis spent on every command since the last RESETSTAT, but the probe's own INFO. */
function commandTime(info: string): number {
  let usec = 0;
  for (const [, command, spent] of info.matchAll(/cmdstat_([a-z|]+):calls=\d+,usec=(\d+)/g)) {
    if (command !== 'info' && command !== 'config|resetstat') usec += Number(spent);
  }
  return usec;
}

const server = await startRedisServer();
const redis = new Redis({ port: server.port });
const costs = new Map(Object.keys(variants).map((name) => [name, [] as number[]]));
try {
  for (let repeat = 0; repeat < Number(values.repeat); repeat++) {
    for (const [name, [prepareTake, prepareGive]] of Object.entries(variants)) {
      const take = await prepareTake(redis);
      const give = await prepareGive(redis);
      await redis.config('RESETSTAT');
      for (let i = 0; i < pairs; i++) {
        await take();
        await give();
      }
      costs.get(name)!.push(commandTime(await redis.info('commandstats')) / pairs);
    }
  }
  for (const [name, turns] of costs) console.log(`${name.padEnd(22)} ${median(turns).toFixed(2)} µs of Redis per pair`);
} finally {
  await redis.quit();
  await server.stop();
}
