import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { Redis } from 'ioredis';
import { LockClient } from '../../src/index.js';
import { startServer } from '../../harness/server.js';
import { entryPoints, type EntryPoint } from './entry-points.js';

const server = await startServer();
const redis = server.client();
await redis.ping();

/** How long an async call may stay pending before we call it "accepted and waiting". */
const SETTLE_MS = 300;

/** What calling `entry` with `bad` did: the error it threw or rejected with, or what went wrong. */
async function outcome(entry: EntryPoint, locks: LockClient, bad: unknown, n: number): Promise<unknown> {
  let result: unknown;
  try {
    result = entry.call(locks, bad, n);
  } catch (error) {
    return entry.sync ? error : `threw synchronously instead of rejecting: ${String(error)}`;
  }
  if (entry.sync) return 'returned without throwing';
  if (!(result instanceof Promise)) return 'returned no promise';
  let timer: NodeJS.Timeout | undefined;
  const pending = new Promise(
    (resolve) => (timer = setTimeout(resolve, SETTLE_MS, 'still pending: accepted and waiting')),
  );
  try {
    return await Promise.race([result.then(() => 'resolved: the bad value was accepted'), pending]);
  } catch (error) {
    return error;
  } finally {
    clearTimeout(timer);
  }
}

/** Commands Redis ran since the last CONFIG RESETSTAT, other than the INFO and CONFIG of this test. */
async function commandsSent(client: Redis): Promise<string[]> {
  const info = await client.info('commandstats');
  return [...info.matchAll(/cmdstat_([\w|]+):calls=(\d+)/g)]
    .filter(([, name]) => !/^(info|config)(\|\w+)?$/.test(name ?? ''))
    .map(([, name, calls]) => `${name} x${calls}`);
}

/**
 * Each entry gets a client of its own, closed after it: a bad value that was accepted (a lock then
 * held and renewed) cannot send commands into the next entry's count.
 */
async function checkEntry(entry: EntryPoint): Promise<void> {
  const connection = new Redis({ host: server.host, port: server.port });
  connection.on('error', () => undefined);
  await connection.ping();
  const locks = new LockClient(connection);
  await redis.config('RESETSTAT');
  let n = 0;
  try {
    await fc.assert(
      fc.asyncProperty(entry.bad, async (bad) => {
        const error = await outcome(entry, locks, bad, n++);
        const typed = error instanceof TypeError || error instanceof RangeError;
        assert.ok(typed, `expected TypeError or RangeError, got ${String(error)}`);
        // A member of a list is named with its index: `locks[1]`.
        const named = [`\`${entry.argument}\``, `\`${entry.argument}[`].some((name) => error.message.includes(name));
        assert.ok(named, `the message names \`${entry.argument}\`: ${error.message}`);
      }),
      { numRuns: 40, endOnFailure: true, includeErrorInReport: true },
    );
    assert.deepEqual(await commandsSent(redis), [], 'bad input reached Redis');
  } finally {
    await locks.shutdown();
    connection.disconnect();
  }
}

describe('bad input on every public entry point: TypeError or RangeError naming the argument, nothing sent to Redis', () => {
  for (const entry of entryPoints(redis)) {
    it(`${entry.name}: bad \`${entry.argument}\``, () => checkEntry(entry));
  }
});
