/**
 * Probe, not part of `npm run bench`: how much of scenario 1's pair is a process waking up.
 * latchkey's two lock scripts in a bare ioredis loop, three ways, interleaved like scenario 1:
 * as they are; spending `--spin` µs of CPU while each command is in flight (the process is still
 * awake when the reply comes); and spending it after each reply (on the path to the next write).
 * Beside them, two PINGs per "pair": the round trips alone.
 *
 *   node --import tsx bench/probes/wake-up.ts [--spin 20] [--rounds 100]
 */
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { startRedisServer } from '../../src/cli/redis-server.js';
import { lockAcquire, lockRelease } from '../../src/scripts/index.js';
import { interleaved, pairsUntil, type Contestant } from '../scenarios/single.js';
import { median, medianInterval, roundRatios } from '../stats.js';

const { values } = parseArgs({
  options: { spin: { type: 'string', default: '20' }, rounds: { type: 'string', default: '100' } },
});
const spinMs = Number(values.spin) / 1000;
const rounds = Number(values.rounds);

/** Keeps the CPU busy (and the event loop blocked) for `ms`. */
function spin(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end);
}

const server = await startRedisServer();
const redis = new Redis({ port: server.port });
try {
  for (const script of [lockAcquire, lockRelease]) await redis.script('LOAD', script.source);
  const keys = ['probe:{x}:lock', 'probe:{x}:lock-queue', 'probe:{x}:lock-waiters'];
  const owner = 'client-id-of-sixteen:owner-twelve';
  const loop =
    (inFlight: number, afterReply: number) =>
    async (until: () => boolean): Promise<number> => {
      let pairs = 0;
      while (!until()) {
        const acquired = redis.evalsha(lockAcquire.sha, keys.length, ...keys, owner, 30_000);
        spin(inFlight);
        await acquired;
        spin(afterReply);
        const released = redis.evalsha(lockRelease.sha, keys.length, ...keys, owner, 'probe:released');
        spin(inFlight);
        await released;
        spin(afterReply);
        pairs++;
      }
      return pairs;
    };
  // Two PINGs: the round trips alone, with no script for Redis to run.
  const pings = (until: () => boolean): Promise<number> =>
    pairsUntil(
      () => redis.ping(),
      () => redis.ping(),
      until,
    );
  const contestants: Contestant[] = [
    { name: 'bare', loop: loop(0, 0) },
    { name: 'two PINGs', loop: pings },
    { name: `${values.spin} µs in flight`, loop: loop(spinMs, 0) },
    { name: `${values.spin} µs after reply`, loop: loop(0, spinMs) },
  ];
  const rates = await interleaved(contestants, 40, rounds);
  const bare = rates.get('bare')!;
  for (const { name } of contestants) {
    const own = rates.get(name)!;
    const ratios = roundRatios(own, bare);
    const [low, high] = medianInterval(ratios);
    const pair = (1e6 / median(own)).toFixed(1);
    console.log(
      `${name.padEnd(22)} ${pair} µs/pair, ${median(ratios).toFixed(3)}x bare (95% ${low.toFixed(3)}-${high.toFixed(3)})`,
    );
  }
} finally {
  await redis.quit();
  await server.stop();
}
