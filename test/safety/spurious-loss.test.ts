/**
 * A renewal racing a normal release must not report the lock lost (docs/guarantees.md, 3.5: only a renewal
 * that finds the lock gone while it is held, or fails past its lease, marks it lost). Many quick
 * lock()/unlock() cycles on several locks, with the watchdog renewing every few ms, must emit no
 * `lockLost` at all.
 */
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import type { LockLostError } from '../../src/index.js';
import { startServer, type TestServer } from '../../harness/server.js';

let server: TestServer;
before(async () => {
  server = await startServer();
});

/** Renewal every 33 ms; a hold lasts well under 1 ms, so no lease can really run out while held. */
const WATCHDOG_MS = 100;
const LOCKS = 4;
const CYCLES = 1_500;

describe('no lockLost for locks released normally', { timeout: 25_000 }, () => {
  it(`${LOCKS} locks x ${CYCLES} lock()/unlock() cycles, watchdogTimeout ${WATCHDOG_MS} ms: 0 lockLost`, async () => {
    const locks = server.lockClient({ watchdogTimeout: WATCHDOG_MS });
    const lost: string[] = [];
    locks.on('lockLost', (name: string, error: LockLostError) => lost.push(`${name}: ${error.message}`));
    await Promise.all(
      Array.from({ length: LOCKS }, async (_, i) => {
        const lock = locks.getLock(`churn-${i}`);
        for (let cycle = 0; cycle < CYCLES; cycle++) {
          await lock.lock();
          await lock.unlock();
        }
      }),
    );
    assert.equal(
      lost.length,
      0,
      `${lost.length} lockLost events in ${LOCKS * CYCLES} cycles, e.g. ${lost.slice(0, 2).join('; ')}`,
    );
  });
});
