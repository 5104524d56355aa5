/**
 * Decodes a primitive's keys into what `latchkey inspect` shows: holders, waiters, permits, counts.
 */
import type { Redis } from 'ioredis';
import {
  countDownLatchKeys,
  lockKeys,
  permitExpirableSemaphoreKeys,
  readWriteLockKeys,
  semaphoreKeys,
  fenceCounterKey,
  type KeyKind,
} from '../keys.js';

/** One owner: `<client id>:<owner id>` and how many holds it has. */
export interface Holder {
  readonly owner: string;
  readonly client: string;
  readonly holds: number;
}

/** A queued lock waiter, in queue order. */
export interface LockWaiter {
  readonly position: number;
  readonly owner: string;
  readonly client: string;
  /** ms since it queued. */
  readonly waitingFor: number | null;
  /** ms until its place lapses unless it refreshes it; negative: its process stopped refreshing. */
  readonly placeLapsesIn: number | null;
}

/** Lock, FairLock, SpinLock and FencedLock of one name (they share one lock). */
export interface LockReport {
  readonly kind: 'lock';
  readonly name: string;
  readonly holders: readonly Holder[];
  /** ms left of the lease; -1 none, -2 not held. */
  readonly ttl: number;
  readonly queue: readonly LockWaiter[];
  /** FencedLock: the holder's token, and the last token issued for this name. */
  readonly token: string | null;
  readonly lastToken: string | null;
}

export interface ReadWriteLockReport {
  readonly kind: 'read-write-lock';
  readonly name: string;
  readonly writer: (Holder & { readonly ttl: number }) | null;
  readonly readers: readonly (Holder & { readonly leaseEndsIn: number | null })[];
}

export interface SemaphoreReport {
  readonly kind: 'semaphore';
  readonly name: string;
  /** Free permits; null when never set (the total is not stored: permits have no owners). */
  readonly available: number | null;
  readonly waiters: readonly {
    readonly id: string;
    readonly permits: number;
    /** ms since it queued. */
    readonly waitingFor: number;
    readonly placeLapsesIn: number | null;
  }[];
}

export interface PermitExpirableSemaphoreReport {
  readonly kind: 'permit-expirable-semaphore';
  readonly name: string;
  readonly total: number | null;
  readonly available: number | null;
  /** Permits out, with ms until their lease ends (null: held until released). */
  readonly holders: readonly { readonly permit: string; readonly leaseEndsIn: number | null }[];
}

export interface CountDownLatchReport {
  readonly kind: 'count-down-latch';
  readonly name: string;
  readonly count: number;
  readonly ttl: number;
}

export type PrimitiveReport = (
  LockReport | ReadWriteLockReport | SemaphoreReport | PermitExpirableSemaphoreReport | CountDownLatchReport
) & {
  /** host:port of the primary that holds its keys. */
  node?: string;
  /** Connections subscribed to its channels: processes with a waiter parked on it. */
  listening?: number;
};

type Command = [string, ...(string | number)[]];

async function pipeline(node: Redis, commands: Command[]): Promise<unknown[]> {
  const results = (await node.pipeline(commands).exec()) ?? [];
  return results.map(([error, value]) => {
    if (error) throw error;
    return value;
  });
}

const clientOf = (owner: string): string => owner.slice(0, owner.indexOf(':'));
const int = (value: unknown): number | null => (value === null || value === undefined ? null : Number(value));
const pairs = (flat: unknown): [string, string][] => {
  const list = flat as string[];
  const result: [string, string][] = [];
  for (let i = 0; i < list.length; i += 2) result.push([list[i]!, list[i + 1]!]);
  return result;
};
const serverMs = (time: unknown): number => {
  const [seconds, micros] = time as [string, string];
  return Number(seconds) * 1_000 + Math.floor(Number(micros) / 1_000);
};

/** Reads and decodes one primitive in one round trip; undefined when nothing of it is left. */
export async function readPrimitive(
  node: Redis,
  prefix: string,
  name: string,
  kind: KeyKind,
): Promise<PrimitiveReport | undefined> {
  switch (kind) {
    case 'lock': {
      const keys = lockKeys(prefix, name);
      const [time, hash, ttl, queue, waiters, fence] = await pipeline(node, [
        ['time'],
        ['hgetall', keys.hash],
        ['pttl', keys.hash],
        ['lrange', keys.queue, 0, -1],
        ['hgetall', keys.waiters],
        ['get', fenceCounterKey(prefix, name)],
      ]);
      const now = serverMs(time);
      const fields = hash as Record<string, string>;
      const places = waiters as Record<string, string>;
      // Owners hold a ':'; other fields (the fencing token, hand-over marks) do not.
      const holders = Object.entries(fields)
        .filter(([field]) => field.includes(':'))
        .map(([owner, holds]) => ({ owner, client: clientOf(owner), holds: Number(holds) }));
      const report: LockReport = {
        kind,
        name,
        holders,
        ttl: ttl as number,
        queue: (queue as string[]).map((owner, i) => {
          const place = places[owner]?.split('|') ?? [];
          const lapsesAt = int(place[0]);
          const queuedAt = int(place[4]);
          return {
            position: i + 1,
            owner,
            client: clientOf(owner),
            waitingFor: queuedAt && now - queuedAt,
            placeLapsesIn: lapsesAt && lapsesAt - now,
          };
        }),
        token: fields.token ?? null,
        lastToken: (fence as string | null) ?? null,
      };
      return holders.length + report.queue.length > 0 || report.lastToken !== null ? report : undefined;
    }
    case 'rw': {
      const keys = readWriteLockKeys(prefix, name);
      const [time, write, ttl, read] = await pipeline(node, [
        ['time'],
        ['hgetall', keys.write],
        ['pttl', keys.write],
        ['hgetall', keys.read],
      ]);
      const now = serverMs(time);
      const reads = read as Record<string, string>;
      const [writer] = Object.entries(write as Record<string, string>).map(([owner, holds]) => ({
        owner,
        client: clientOf(owner),
        holds: Number(holds),
        ttl: ttl as number,
      }));
      const readers = Object.entries(reads)
        .filter(([field]) => field.startsWith('n:'))
        .map(([field, holds]) => {
          const owner = field.slice(2);
          const end = int(reads[`t:${owner}`]);
          return { owner, client: clientOf(owner), holds: Number(holds), leaseEndsIn: end && end - now };
        });
      if (!writer && readers.length === 0) return undefined;
      return { kind: 'read-write-lock', name, writer: writer ?? null, readers };
    }
    case 'semaphore': {
      const keys = semaphoreKeys(prefix, name);
      const [time, permits, queue, wants] = await pipeline(node, [
        ['time'],
        ['get', keys.permits],
        ['zrange', keys.queue, 0, -1, 'WITHSCORES'],
        ['hgetall', keys.wants],
      ]);
      const now = serverMs(time);
      const wanted = wants as Record<string, string>;
      const waiters = pairs(queue).map(([id, arrivedMicros]) => {
        const [count, lapsesAt] = (wanted[id] ?? '').split(':');
        return {
          id,
          permits: Number(count ?? 1) || 1,
          waitingFor: Math.max(0, now - Math.floor(Number(arrivedMicros) / 1_000)),
          placeLapsesIn: lapsesAt ? Number(lapsesAt) - now : null,
        };
      });
      if (permits === null && waiters.length === 0) return undefined;
      return { kind: 'semaphore', name, available: int(permits), waiters };
    }
    case 'expirable-semaphore': {
      const keys = permitExpirableSemaphoreKeys(prefix, name);
      const [time, total, leases] = await pipeline(node, [
        ['time'],
        ['get', keys.total],
        ['zrange', keys.leases, 0, -1, 'WITHSCORES'],
      ]);
      const now = serverMs(time);
      const holders = pairs(leases)
        .map(([permit, end]) => ({ permit, leaseEndsIn: end === 'inf' ? null : Number(end) - now }))
        .filter((holder) => holder.leaseEndsIn === null || holder.leaseEndsIn > 0);
      const count = int(total);
      if (count === null && holders.length === 0) return undefined;
      const available = count === null ? null : Math.max(0, count - holders.length);
      return { kind: 'permit-expirable-semaphore', name, total: count, available, holders };
    }
    case 'latch': {
      const keys = countDownLatchKeys(prefix, name);
      const [count, ttl] = await pipeline(node, [
        ['get', keys.count],
        ['pttl', keys.count],
      ]);
      if (count === null) return undefined;
      return { kind: 'count-down-latch', name, count: Number(count), ttl: ttl as number };
    }
  }
}
