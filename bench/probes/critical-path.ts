/**
 * Probe, not part of `npm run bench`: how long the client works between a reply and its next
 * write in scenario 1's loop, for each library: the client's share of the pair's critical path.
 * (What it does after a write, while Redis works, costs nothing here.) Times the socket's 'data'
 * event to the next `write()` on the same ioredis connection, inside the loop as it runs. Needs
 * `npm run build` first (latchkey runs from dist/, as in the bench).
 *
 *   node --import tsx bench/probes/critical-path.ts [--rounds 40]
 */
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { startRedisServer } from '../../src/cli/redis-server.js';
import { lockAcquire, lockRelease } from '../../src/scripts/index.js';
import { latchkeyLock, redisSemaphore } from '../libraries.js';
import { libraryLoop, lockScriptsLoop, type Contestant } from '../scenarios/single.js';
import { median } from '../stats.js';

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '40' } } });

const server = await startRedisServer();
const redis = new Redis({ port: server.port });
const libraries = [latchkeyLock, redisSemaphore];
const sessions = libraries.map((library) => library.open(redis));
try {
  await redis.ping();
  for (const script of [lockAcquire, lockRelease]) await redis.script('LOAD', script.source);
  // Reply arrived (before ioredis parses it) -> the next command written.
  const gaps: number[] = [];
  let replyAt: number | undefined;
  let recording = false;
  redis.stream.prependListener('data', () => (replyAt = performance.now()));
  const write = redis.stream.write.bind(redis.stream) as (...args: unknown[]) => boolean;
  redis.stream.write = (...args: unknown[]): boolean => {
    if (recording && replyAt !== undefined) gaps.push((performance.now() - replyAt) * 1000);
    replyAt = undefined;
    return write(...args);
  };

  const pairsOf = (count: number) => {
    let left = count;
    return () => left-- <= 0;
  };
  const contestants: Contestant[] = [
    { name: 'bare lock scripts', loop: (until) => lockScriptsLoop(redis, 'probe:bare', until) },
    ...libraries.map((library, i) => ({
      name: library.name,
      loop: (until: () => boolean) => libraryLoop(sessions[i]!, `probe:library-${i}`, until),
    })),
  ];
  const medians = new Map(contestants.map(({ name }) => [name, [] as number[]]));
  for (let round = 0; round < Number(values.rounds); round++) {
    for (const { name, loop } of contestants) {
      await loop(pairsOf(50)); // warm
      gaps.length = 0;
      recording = true;
      await loop(pairsOf(200));
      recording = false;
      medians.get(name)!.push(median(gaps));
    }
  }
  for (const [name, rounds] of medians) {
    const perPair = 2 * median(rounds);
    console.log(`${name.padEnd(18)} ${perPair.toFixed(1)} µs per pair from replies to next writes`);
  }
} finally {
  await Promise.all(sessions.map((session) => session.close()));
  await redis.quit();
  await server.stop();
}
