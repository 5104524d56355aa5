/**
 * How a worker task takes and releases its primitive in each API style around its critical section.
 */
import type { FencedLock, Lock, LockClient, Semaphore } from '../../src/index.js';
import type { Style } from '../protocol.js';

/** What a task holds while its critical section runs. */
export interface Grant {
  readonly signal?: AbortSignal;
  readonly token?: bigint;
}

/** The critical section. It never rejects (it reports its own failures). */
export type Body = (grant: Grant) => Promise<void>;

/** How a guard reports what it observed besides the section itself. */
export interface GuardReport {
  /** The release ended: `error` when it rejected. */
  released(error?: unknown): void;
  /** A query answered something the operations so far rule out. */
  wrong(what: string, expected: string, actual: string): void;
}

/**
 * Takes the primitive, runs `body`, gives it back. Resolves false when it gave up waiting
 * (`tryAcquire` with a waitTime); rejects when taking failed (the `stop` signal's reason when the
 * runner ended the wait).
 */
export type Guard = (body: Body, stop: AbortSignal, report: GuardReport) => Promise<boolean>;

/** Runs `release` and reports how it ended; never rejects. */
async function give(release: () => Promise<unknown>, report: GuardReport): Promise<void> {
  try {
    await release();
    report.released();
  } catch (error) {
    report.released(error);
  }
}

async function expectHolds(lock: Lock, expected: number, report: GuardReport, when: string): Promise<void> {
  const actual = await lock.getHoldCount().catch(() => undefined); // unreachable: nothing to compare
  if (actual !== undefined && actual !== expected) report.wrong(`hold count ${when}`, String(expected), String(actual));
}

/**
 * Runs `withLock`-shaped code: a rejection before the body ran is the acquisition's (rethrown),
 * after it the release's (reported).
 */
async function releasedBy(run: (ran: () => void) => Promise<unknown>, report: GuardReport): Promise<boolean> {
  let ran = false;
  try {
    await run(() => (ran = true));
  } catch (error) {
    if (!ran) throw error;
    report.released(error);
    return true;
  }
  report.released();
  return true;
}

function withLockGuard(lock: Lock): Guard {
  return (body, stop, report) =>
    releasedBy(
      (ran) =>
        lock.withLock(
          async (signal) => {
            ran();
            await body({ signal });
          },
          { signal: stop },
        ),
      report,
    );
}

function acquireGuard(lock: Lock): Guard {
  return async (body, stop, report) => {
    const lease = await lock.acquire({ signal: stop });
    await body({ signal: lease.signal, ...(lease.token === undefined ? {} : { token: lease.token }) });
    await give(() => lease.release(), report);
    return true;
  };
}

function lockUnlockGuard(lock: Lock): Guard {
  return async (body, stop, report) => {
    await lock.lock({ signal: stop });
    await body({});
    await give(() => lock.unlock(), report);
    return true;
  };
}

function tokenGuard(lock: FencedLock): Guard {
  return async (body, stop, report) => {
    const token = await lock.lockAndGetToken({ signal: stop });
    await body({ token });
    await give(() => lock.unlock(), report);
    return true;
  };
}

/** Redisson-style re-entry inside one scope: two holds, counted down one by one. */
function scopeGuard(lock: Lock, client: LockClient): Guard {
  return (body, stop, report) =>
    client.scope(async () => {
      await lock.lock({ signal: stop });
      let holds = 1;
      const release = async (): Promise<void> => {
        for (; holds > 0; holds--) await lock.unlock();
      };
      try {
        await lock.lock({ signal: stop });
        holds = 2;
        await expectHolds(lock, 2, report, 'after lock(); lock()');
        await body({});
        await lock.unlock();
        holds = 1;
        await expectHolds(lock, 1, report, 'after one unlock() of two holds');
      } finally {
        await give(release, report);
      }
      await expectHolds(lock, 0, report, 'after the last unlock()');
      return true;
    });
}

/** `withLock` nested in `withLock` on one handle: the inner one re-enters. */
function nestedGuard(lock: Lock): Guard {
  return (body, stop, report) =>
    releasedBy(
      (ran) =>
        lock.withLock(
          async () => {
            await expectHolds(lock, 1, report, 'in withLock');
            await lock.withLock(
              async (signal) => {
                ran();
                await expectHolds(lock, 2, report, 'in nested withLock');
                await body({ signal });
              },
              { signal: stop },
            );
            await expectHolds(lock, 1, report, 'after the nested withLock');
          },
          { signal: stop },
        ),
      report,
    );
}

function permitGuard(semaphore: Semaphore, waitTime: number | undefined): Guard {
  return async (body, stop, report) => {
    if (waitTime === undefined) await semaphore.acquire(1, { signal: stop });
    else if (!(await semaphore.tryAcquire({ waitTime, signal: stop }))) return false;
    await body({});
    await give(() => semaphore.release(1), report);
    return true;
  };
}

export interface GuardTarget {
  readonly lock?: Lock;
  readonly fenced?: FencedLock;
  readonly semaphore?: Semaphore;
  readonly client: LockClient;
  readonly waitTime?: number;
}

/** The guard for one task: its style over its handle. */
export function guardFor(style: Style, target: GuardTarget): Guard {
  const { lock, fenced, semaphore } = target;
  const need = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error(`style ${style} does not fit this primitive`);
    return value;
  };
  switch (style) {
    case 'withLock':
      return withLockGuard(need(lock));
    case 'acquire':
      return acquireGuard(need(lock));
    case 'lock':
      return lockUnlockGuard(need(lock));
    case 'token':
      return tokenGuard(need(fenced));
    case 'scope':
      return scopeGuard(need(lock), target.client);
    case 'nested':
      return nestedGuard(need(lock));
    case 'permit':
      return permitGuard(need(semaphore), undefined);
    case 'try-permit':
      return permitGuard(need(semaphore), target.waitTime ?? 1_000);
    case 'bare':
      return async (body, _stop, report) => {
        await body({});
        report.released();
        return true;
      };
  }
}
