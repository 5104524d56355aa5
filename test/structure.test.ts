import assert from 'node:assert/strict';
import { Session } from 'node:inspector/promises';
import { test } from 'node:test';
import { startServer } from '../harness/server.js';

/**
 * The files an uncontended `lock()` / `unlock()` runs, as docs/architecture.md names them: six of
 * lock logic, the rest leaves (the client's open check, the clock, owner ids, the listening check,
 * renewal, timers, the Redis port, diagnostics). A new file on this path, or one that left it,
 * fails here: update docs/architecture.md with it.
 */
const LOCK_LOGIC = [
  'engine/acquire.ts',
  'engine/key-lock.ts',
  'engine/liveness.ts',
  'engine/lock-handle.ts',
  'loss/push-detector.ts',
  'primitives/reentrant-lock.ts',
];
const LEAVES = [
  'client.ts', // the context's assertOpen()
  'clock.ts',
  'diagnostics.ts',
  'engine/deadline-queue.ts', // the client's timers (a hold's proven end, its renewal, the call's limit)
  'engine/server-checks.ts', // has this client checked the server's eviction policy?
  'engine/timers.ts',
  'engine/waiters.ts', // does a recent wait still listen for this lock?
  'engine/watchdog.ts',
  'owner.ts',
  'redis/coalesce-writes.ts',
  'redis/ioredis-adapter.ts',
  'redis/script-runner.ts',
  'redis/script-sender.ts',
];

test('an uncontended lock() and unlock() run the files docs/architecture.md names', async () => {
  const server = await startServer();
  const lock = server.lockClient().getLock('structure');
  // Warm up: the first calls load scripts, open the tracking connection, compile.
  for (let i = 0; i < 100; i++) {
    await lock.lock();
    await lock.unlock();
  }
  const session = new Session();
  session.connect();
  try {
    await session.post('Profiler.enable');
    await session.post('Profiler.startPreciseCoverage', { callCount: true, detailed: false });
    await session.post('Profiler.takePreciseCoverage'); // counts from here
    // Longer than the loss watch's 50 ms beat, so that its timer is set again in the window.
    const started = performance.now();
    for (let i = 0; i < 50 || performance.now() - started < 200; i++) {
      await lock.lock();
      await lock.unlock();
    }
    const { result } = await session.post('Profiler.takePreciseCoverage');
    const ran = result
      .filter((script) => /\/src\/.*\.ts$/.test(script.url))
      .filter((script) => script.functions.some((fn) => fn.ranges[0]!.count > 0))
      .map((script) => script.url.replace(/^.*\/src\//, ''))
      .sort();
    assert.deepEqual(ran, [...LOCK_LOGIC, ...LEAVES].sort());
  } finally {
    session.disconnect();
  }
});
