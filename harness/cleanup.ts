/**
 * What the test harness started, stopped when the test file ends: one list for servers, proxies
 * and clients, run newest first (a client registered after its server closes before the server
 * dies). Imports node:test: only for test files, never for the bench or the fault runner.
 */
import { after } from 'node:test';
import type { LockClient } from '../src/index.js';

const cleanups: (() => Promise<void> | void)[] = [];
after(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) {
    try {
      await cleanup();
    } catch {
      // already closed by the test, or already dead: carry on with the rest
    }
  }
});

/** Runs `cleanup` when the test file ends, before everything registered earlier. */
export function atFileEnd(cleanup: () => Promise<void> | void): void {
  cleanups.push(cleanup);
}

/**
 * Shuts `locks` down after the file, before the Redis clients and servers made before it close:
 * a test file's own `after` would run after the harness's, with the servers already gone.
 */
export function shutDownAfterFile(locks: LockClient): LockClient {
  atFileEnd(() => locks.shutdown());
  return locks;
}
