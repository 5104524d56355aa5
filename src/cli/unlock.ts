/**
 * `latchkey unlock NAME --force`: releases a primitive whoever holds it, through the normal scripts.
 */
import { LockClient } from '../index.js';
import type { Connection } from './connect.js';
import type { PrimitiveReport } from './decode.js';
import { takeSnapshot } from './inspect.js';

/** The kinds `unlock --kind` accepts, as `inspect` names them. */
export const UNLOCK_KINDS = [
  'lock',
  'read-write-lock',
  'semaphore',
  'permit-expirable-semaphore',
  'count-down-latch',
] as const;
export type UnlockKind = (typeof UNLOCK_KINDS)[number];

const escapeGlob = (text: string): string => text.replace(/[*?[\]\\]/g, '\\$&');

/**
 * What "unlock" means per kind, done through the library's own calls so that waiters are woken
 * exactly as on a normal release:
 * - lock (and fair / spin / fenced): delete it whoever holds it; the next queued waiter gets it.
 * - read-write lock: drop the writer and every reader.
 * - permit-expirable semaphore: release every permit out; their holders' release() then rejects.
 * - count-down latch: open it (delete the count), releasing everyone awaiting it.
 * - semaphore: nothing: its permits have no owners, so nothing can be taken back.
 * Resolves with one line per primitive found, and whether anything was released.
 */
export async function forceUnlock(
  connection: Connection,
  prefix: string,
  name: string,
  kind: UnlockKind | undefined,
): Promise<{ lines: string[]; released: boolean }> {
  const snapshot = await takeSnapshot(connection, prefix, escapeGlob(name));
  const found = snapshot.primitives.filter((report) => kind === undefined || report.kind === kind);
  if (found.length === 0)
    return { lines: [`nothing named "${name}" is held${kind ? ` (${kind})` : ''}`], released: false };
  const locks = new LockClient(connection.client, { keyPrefix: prefix });
  try {
    const lines: string[] = [];
    let released = false;
    for (const report of found) {
      const line = await unlockOne(locks, report);
      released ||= line.released;
      lines.push(`${report.kind} "${name}": ${line.text}`);
    }
    return { lines, released };
  } finally {
    await locks.shutdown();
  }
}

async function unlockOne(locks: LockClient, report: PrimitiveReport): Promise<{ text: string; released: boolean }> {
  const owners = (list: readonly { owner: string; holds: number }[]): string =>
    list.map((holder) => `${holder.owner} x${holder.holds}`).join(', ');
  switch (report.kind) {
    case 'lock': {
      if (report.holders.length === 0) return { text: 'was not locked', released: false };
      const deleted = await locks.getLock(report.name).forceUnlock();
      const next = report.queue.length > 0 ? `; handed to the next of ${report.queue.length} queued waiters` : '';
      return deleted
        ? { text: `unlocked (was held by ${owners(report.holders)})${next}`, released: true }
        : { text: 'was released meanwhile', released: false };
    }
    case 'read-write-lock': {
      const rw = locks.getReadWriteLock(report.name);
      const writer = await rw.writeLock().forceUnlock();
      const readers = await rw.readLock().forceUnlock();
      const was = [
        report.writer ? `writer ${owners([report.writer])}` : '',
        report.readers.length ? `readers ${owners(report.readers)}` : '',
      ]
        .filter(Boolean)
        .join('; ');
      return writer || readers
        ? { text: `unlocked (was: ${was})`, released: true }
        : { text: 'was released meanwhile', released: false };
    }
    case 'permit-expirable-semaphore': {
      const semaphore = locks.getPermitExpirableSemaphore(report.name);
      let count = 0;
      for (const holder of report.holders) if (await semaphore.tryRelease(holder.permit)) count++;
      return { text: `released ${count} of ${report.holders.length} permits out`, released: count > 0 };
    }
    case 'count-down-latch': {
      const deleted = await locks.getCountDownLatch(report.name).delete();
      return deleted
        ? { text: `opened (count was ${report.count}); everyone awaiting it is released`, released: true }
        : { text: 'was opened meanwhile', released: false };
    }
    case 'semaphore':
      return {
        text:
          `left alone: a semaphore's permits have no owners, so there is nothing to take back ` +
          `(${report.available ?? 0} free); return permits with addPermits() or release() from your code`,
        released: false,
      };
  }
}
