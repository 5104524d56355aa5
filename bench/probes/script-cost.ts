/**
 * Probe, not part of `npm run bench`: what a pair of scripts costs Redis itself (INFO
 * commandstats, µs per acquire + release), sent one at a time as in scenario 1. Compares
 * latchkey's two lock scripts, the same release without its LPOP (what a "waiters queued" mark
 * in the lock hash would save when nobody is queued), and scenario 1's floor scripts.
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
interface Call {
  readonly source: string;
  readonly keys: readonly string[];
  readonly args: readonly (string | number)[];
}
const acquire: Call = { source: lockAcquire.source, keys, args: [owner, 30_000] };
const releaseArgs = [owner, 'probe:released'];
const pairsToTry: Record<string, readonly [take: Call, give: Call]> = {
  'latchkey lock scripts': [acquire, { source: lockRelease.source, keys, args: releaseArgs }],
  'release without LPOP': [acquire, { source: RELEASE_WITHOUT_LPOP, keys, args: releaseArgs }],
  'floor scripts': [
    { source: SET_IF_ABSENT, keys: ['probe:floor'], args: [owner, 30_000] },
    { source: DELETE_IF_OWNER, keys: ['probe:floor'], args: [owner] },
  ],
};

/** Sends `call` by its SHA1 (loaded beforehand). */
function send(redis: Redis, sha: string, call: Call): Promise<unknown> {
  return redis.evalsha(sha, call.keys.length, ...call.keys, ...call.args);
}

const server = await startRedisServer();
const redis = new Redis({ port: server.port });
const costs = new Map(Object.keys(pairsToTry).map((name) => [name, [] as number[]]));
try {
  for (let repeat = 0; repeat < Number(values.repeat); repeat++) {
    for (const [name, [take, give]] of Object.entries(pairsToTry)) {
      const takeSha = (await redis.script('LOAD', take.source)) as string;
      const giveSha = (await redis.script('LOAD', give.source)) as string;
      await redis.config('RESETSTAT');
      for (let i = 0; i < pairs; i++) {
        await send(redis, takeSha, take);
        await send(redis, giveSha, give);
      }
      const stats = (await redis.info('commandstats')).match(/cmdstat_evalsha:calls=\d+,usec=(\d+)/);
      costs.get(name)!.push(Number(stats?.[1]) / pairs);
    }
  }
  for (const [name, turns] of costs) console.log(`${name.padEnd(22)} ${median(turns).toFixed(2)} µs of Redis per pair`);
} finally {
  await redis.quit();
  await server.stop();
}
