/**
 * `latchkey inspect`: a snapshot of every primitive matching a pattern, from every primary.
 */
import type { Redis } from 'ioredis';
import { parseKey, type KeyKind } from '../keys.js';
import type { Connection } from './connect.js';
import { readPrimitive, type PrimitiveReport } from './decode.js';

/** What `latchkey inspect` found, as `--json` prints it. */
export interface Snapshot {
  readonly mode: Connection['mode'];
  readonly address: string;
  readonly prefix: string;
  readonly pattern: string;
  /** Local time of the snapshot, ISO 8601. */
  readonly at: string;
  readonly primitives: readonly PrimitiveReport[];
}

interface Group {
  readonly node: Redis;
  readonly name: string;
  readonly kind: KeyKind;
}

const escapeGlob = (text: string): string => text.replace(/[*?[\]\\]/g, '\\$&');
const nodeName = (node: Redis): string => `${node.options.host ?? 'localhost'}:${node.options.port ?? 6379}`;

async function scan(node: Redis, match: string): Promise<string[]> {
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await node.scan(cursor, 'MATCH', match, 'COUNT', 1_000);
    cursor = next;
    keys.push(...batch);
  } while (cursor !== '0');
  return keys;
}

/** Subscribers per primitive (`<kind>\0<name>`), summed over every node, classic and sharded pub/sub. */
async function listeners(connection: Connection, prefix: string, match: string): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  const add = (channel: string, count: number): void => {
    const parsed = parseKey(prefix, channel);
    if (parsed && count > 0) counts.set(id(parsed), (counts.get(id(parsed)) ?? 0) + count);
  };
  const ask = async (node: Redis, list: string, count: string): Promise<void> => {
    const channels = (await node.call('PUBSUB', list, match)) as string[];
    if (channels.length === 0) return;
    const reply = (await node.call('PUBSUB', count, ...channels)) as (string | number)[];
    for (let i = 0; i < reply.length; i += 2) add(String(reply[i]), Number(reply[i + 1]));
  };
  await Promise.all(connection.allNodes().map((node) => ask(node, 'CHANNELS', 'NUMSUB')));
  // Sharded pub/sub (Redis 7+) lives on the primary of the channel's slot; older servers lack it.
  await Promise.all(connection.primaries().map((node) => ask(node, 'SHARDCHANNELS', 'SHARDNUMSUB').catch(() => {})));
  return counts;
}

const id = (group: { kind: KeyKind; name: string }): string => `${group.kind}\0${group.name}`;

/** Runs `fn` over `items`, at most `limit` at a time. */
async function mapLimited<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = [];
  for (let i = 0; i < items.length; i += limit) results.push(...(await Promise.all(items.slice(i, i + limit).map(fn))));
  return results;
}

/**
 * Every primitive whose name matches `pattern` (a Redis glob), decoded, across every primary: SCAN
 * per node (never KEYS), then one pipelined read per primitive on the node that holds it.
 */
export async function takeSnapshot(connection: Connection, prefix: string, pattern: string): Promise<Snapshot> {
  const match = `${escapeGlob(prefix)}{${pattern}}:*`;
  const groups = new Map<string, Group>();
  await Promise.all(
    connection.primaries().map(async (node) => {
      for (const key of await scan(node, match)) {
        const parsed = parseKey(prefix, key);
        if (parsed) groups.set(id(parsed), { node, name: parsed.name, kind: parsed.kind });
      }
    }),
  );
  const subscribed = await listeners(connection, prefix, match);
  const sorted = [...groups.values()].sort((a, b) => a.name.localeCompare(b.name) || a.kind.localeCompare(b.kind));
  const reports = await mapLimited(sorted, 32, async (group) => {
    const report = await readPrimitive(group.node, prefix, group.name, group.kind);
    if (!report) return undefined;
    report.node = nodeName(group.node);
    report.listening = subscribed.get(id(group)) ?? 0;
    return report;
  });
  return {
    mode: connection.mode,
    address: connection.address,
    prefix,
    pattern,
    at: new Date().toISOString(),
    primitives: reports.filter((report) => report !== undefined),
  };
}
