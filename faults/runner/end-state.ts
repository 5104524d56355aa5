/**
 * The checks after each scenario: every lock free, every semaphore full, no stray key without a TTL.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { keysWithoutTtl } from '../../harness/keys.js';
import type { ResourceSpec } from '../protocol.js';
import { now } from '../rng.js';
import type { Env, Server } from './env.js';
import type { History } from './history.js';

/**
 * Keys a primitive must keep without a TTL (docs/guarantees.md, 3.12 Nothing is left behind):
 * semaphore permits, the expirable semaphore's total, a latch's count, a fenced lock's token
 * counter. Both today's names and the planned ones are listed.
 */
export const DOCUMENTED_PERSISTENT = [
  /:semaphore:permits$/,
  /:expirable-semaphore:total$/,
  /:latch:count$/,
  // FencedLock counters: one per Redis Cluster hash slot, not per name.
  /:fence:\{\d+\}$/,
] as const;

/** Polls `isLocked` until false, up to `ms`: "free", "expired after N ms" or "held" (after N ms). */
async function whenFree(isLocked: () => Promise<boolean>, ms: number): Promise<string> {
  const start = now();
  if (!(await isLocked())) return 'free';
  while (now() - start < ms) {
    await sleep(50);
    if (!(await isLocked())) return `expired after ${Math.round(now() - start)} ms`;
  }
  return ms === 0 ? 'held' : `still held after ${Math.round(now() - start)} ms`;
}

async function lockState(res: ResourceSpec, server: Server, ms: number): Promise<string> {
  const { locks } = server;
  if (res.primitive === 'read-write-lock') {
    const rw = locks.getReadWriteLock(res.name);
    return whenFree(async () => (await rw.readLock().isLocked()) || (await rw.writeLock().isLocked()), ms);
  }
  return whenFree(() => locks.getLock(res.name).isLocked(), ms);
}

/** Whether some release or call on `res` failed: its lock may then stay held until its lease ends. */
function uncertain(history: History, res: string): boolean {
  return history.records.some(
    (r) =>
      r.ev === 'event' && 'res' in r && r.res === res && (r.kind === 'error' || (r.kind === 'released' && r.error)),
  );
}

/**
 * After every task stopped and released (the workers' clients still running, so a watchdog that
 * keeps renewing a released lock shows): each lock must be free (or, when a call on it failed,
 * expire within `leaseMs`), each semaphore must have all its permits back.
 */
export async function checkEndState(
  resources: readonly ResourceSpec[],
  env: Env,
  history: History,
  leaseMs: number,
): Promise<void> {
  for (const res of resources) {
    if (res.primitive === 'none') continue;
    if (res.primitive === 'semaphore') {
      const server = env.servers[0];
      if (!server) continue;
      const actual = await server.locks.getSemaphore(res.name).availablePermits();
      const expected = String(res.permits ?? 1);
      const ok = String(actual) === expected;
      history.add({
        t: now(),
        ev: 'end-state',
        res: res.name,
        ok,
        what: 'available permits',
        expected,
        actual: String(actual),
      });
      continue;
    }
    const servers = res.primitive === 'red-lock' ? env.live : env.servers.slice(0, 1);
    const waitMs = uncertain(history, res.name) ? leaseMs + 1_000 : 0;
    const states = await Promise.all(servers.map((server) => lockState(res, server, waitMs)));
    for (const [i, actual] of states.entries()) {
      const what = res.primitive === 'red-lock' ? `lock on server ${servers[i]?.index}` : 'lock';
      history.add({ t: now(), ev: 'end-state', res: res.name, ok: actual === 'free', what, expected: 'free', actual });
    }
  }
}

/** After the clients shut down: every latchkey key without a TTL that is not documented data. */
export async function checkStrayKeys(env: Env, history: History): Promise<void> {
  for (const server of env.live) {
    for (const key of await keysWithoutTtl(server.admin, DOCUMENTED_PERSISTENT)) {
      const type = await server.admin.type(key);
      history.add({ t: now(), ev: 'stray-key', server: server.index, key, type });
    }
  }
}
