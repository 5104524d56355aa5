import { Redis } from 'ioredis';
import { LockClient } from '../index.js';
import { formatMs } from './stats.js';

/** One row of `latchkey inspect`. */
export interface KeyReport {
  readonly name: string;
  readonly part: string;
  readonly type: string;
  readonly ttl: number;
  readonly content: string;
  readonly subscribers: number;
}

/** Reads every latchkey key whose primitive name matches `pattern` (a Redis glob). */
export async function readKeys(redis: Redis, prefix: string, pattern: string): Promise<KeyReport[]> {
  const reports: KeyReport[] = [];
  const match = `${prefix}{${pattern}}*`;
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', match, 'COUNT', 500);
    cursor = next;
    for (const key of keys) {
      const parsed = /^(.*)\{(.*)\}:?(.*)$/.exec(key.slice(prefix.length));
      const name = parsed?.[2] ?? key;
      const type = await redis.type(key);
      const subscribers = await clientsWaiting(redis, `${prefix}{${name}}`);
      reports.push({
        name,
        part: parsed?.[3] ?? '',
        type,
        ttl: await redis.pttl(key),
        content: await describeKey(redis, key, type),
        subscribers: Number(subscribers),
      });
    }
  } while (cursor !== '0');
  return reports.sort((a, b) => a.name.localeCompare(b.name) || a.part.localeCompare(b.part));
}

/**
 * Processes listening on any channel of one primitive (`<tag>:...`): a lock's waiters each listen
 * on their own client's hand-over channel, a semaphore's or latch's on a shared one.
 */
async function clientsWaiting(redis: Redis, tag: string): Promise<number> {
  const glob = `${tag.replace(/[*?[\]\\]/g, '\\$&')}:*`;
  const channels = (await redis.pubsub('CHANNELS', glob)) as string[];
  if (channels.length === 0) return 0;
  const counts = (await redis.pubsub('NUMSUB', ...channels)) as (string | number)[];
  let total = 0;
  for (let i = 1; i < counts.length; i += 2) total += Number(counts[i]);
  return total;
}

async function describeKey(redis: Redis, key: string, type: string): Promise<string> {
  switch (type) {
    case 'hash': {
      const fields = await redis.hgetall(key);
      return Object.entries(fields)
        .map(([field, value]) => `${field} x${value}`)
        .join(', ');
    }
    case 'zset': {
      const members = await redis.zrange(key, 0, 9, 'WITHSCORES');
      const pairs: string[] = [];
      for (let i = 0; i < members.length; i += 2) pairs.push(`${members[i]}@${members[i + 1]}`);
      return `${await redis.zcard(key)} queued: ${pairs.join(', ')}`;
    }
    case 'string':
      return `value ${await redis.get(key)}`;
    case 'list':
      return `${await redis.llen(key)} entries`;
    case 'set':
      return `${await redis.scard(key)} members`;
    default:
      return '';
  }
}

export async function inspect(url: string, prefix: string, pattern: string): Promise<void> {
  const redis = new Redis(url, { maxRetriesPerRequest: 1 });
  try {
    const rows = await readKeys(redis, prefix, pattern);
    if (rows.length === 0) {
      process.stdout.write(`No latchkey keys match ${prefix}{${pattern}}\n`);
      return;
    }
    for (const row of rows) {
      const ttl = row.ttl === -1 ? 'no expiry' : `ttl ${formatMs(row.ttl)}`;
      process.stdout.write(
        `${row.name}  ${row.part || '(key)'}  ${row.type}  ${ttl}  clients waiting: ${row.subscribers}  ${row.content}\n`,
      );
    }
  } finally {
    redis.disconnect();
  }
}

export async function forceUnlock(url: string, prefix: string, name: string): Promise<boolean> {
  const redis = new Redis(url, { maxRetriesPerRequest: 1 });
  const locks = new LockClient(redis, { keyPrefix: prefix });
  try {
    const deleted = await locks.getLock(name).forceUnlock();
    process.stdout.write(deleted ? `Unlocked "${name}"\n` : `"${name}" was not locked\n`);
    return deleted;
  } finally {
    await locks.shutdown();
    redis.disconnect();
  }
}
