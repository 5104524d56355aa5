/**
 * Every key and channel name latchkey uses, in one place. A key is `<prefix>{<name>}:<kind>` or
 * `<prefix>{<name>}:<kind>:<part>`. The `{name}` hash tag puts every key of one name in one Redis
 * Cluster slot, so each script (which touches several of them) runs on a Cluster; it also means
 * the Lock, FairLock, SpinLock and FencedLock of one name share one lock hash and exclude each
 * other. Different names spread over the slots.
 */
import { clusterSlot } from './redis/cluster-slot.js';

/** `<prefix>{<name>}`: the part every key of one name starts with. */
export function tagOf(prefix: string, name: string): string {
  return `${prefix}{${name}}`;
}

/** The re-entrant lock's hash (see lockKeys): the one key its scripts are sent. */
export function lockHashKey(prefix: string, name: string): string {
  return `${tagOf(prefix, name)}:lock`;
}

/**
 * The re-entrant lock (shared by Lock, FairLock, SpinLock, FencedLock). The lock scripts are sent
 * the hash's name only and find the others by it: they must stay `<hash>:<part>`.
 */
export function lockKeys(prefix: string, name: string) {
  const hash = lockHashKey(prefix, name);
  return {
    /** hash: owner -> hold count (and `token` -> the holder's fencing token) */
    hash,
    /** list: waiting owners, in request order */
    queue: `${hash}:queue`,
    /** hash: waiting owner -> "<place lapses at>|<reservation>|<wait id>|<ticket>|<queued at>" (server ms) */
    waiters: `${hash}:waiters`,
    /** string, short TTL: remembers `owner`'s last release, so a repeated release reports it */
    released: (owner: string) => `${hash}:released:${owner}`,
    /** Hand-overs to the waiters of one client arrive on `<handOverPrefix>:<client id>`. */
    handOverPrefix: `${hash}:hand-over`,
  };
}

/**
 * Per hash slot, the first of "0", "1", "2"... that hashes to it: the same in every process.
 * Made once, on the first FencedLock (about 110,000 hashes, some 30 ms).
 */
let slotTags: string[] | undefined;

function tagOfSlot(slot: number): string {
  if (!slotTags) {
    const tags = new Array<string>(16_384);
    for (let i = 0, found = 0; found < tags.length; i++) {
      const s = clusterSlot(String(i));
      if (tags[s] === undefined) {
        tags[s] = String(i);
        found++;
      }
    }
    slotTags = tags;
  }
  return slotTags[slot]!;
}

/**
 * The fencing-token counter of lock `name`: one per Redis Cluster hash slot (at most 16,384 keys,
 * `<prefix>fence:{<tag>}`), in the slot of the lock it serves, so that a FencedLock leaves no
 * permanent key per name. Tokens of one name still strictly increase: every name of a slot draws
 * from the same counter.
 */
export function fenceCounterKey(prefix: string, name: string): string {
  return `${prefix}fence:{${tagOfSlot(clusterSlot(`{${name}}`))}}`;
}

/** The read-write lock. */
export function readWriteLockKeys(prefix: string, name: string) {
  const tag = tagOf(prefix, name);
  return {
    /** hash: owner -> write holds, expiring with the write lease */
    write: `${tag}:rw:write`,
    /** hash: "n:<owner>" -> read holds, "t:<owner>" -> that reader's lease end (server ms) */
    read: `${tag}:rw:read`,
    readChannel: `${tag}:rw:read-wake`,
    writeChannel: `${tag}:rw:write-wake`,
    /** string, short TTL: remembers `owner`'s last release of one side, so a repeated release reports it */
    released: (side: 'read' | 'write', owner: string) => `${tag}:rw:released:${side}:${owner}`,
  };
}

/** The counting semaphore. */
export function semaphoreKeys(prefix: string, name: string) {
  const tag = tagOf(prefix, name);
  return {
    /** string, no TTL: the available permits */
    permits: `${tag}:semaphore:permits`,
    /** zset: waiter id -> arrival (server µs) */
    queue: `${tag}:semaphore:queue`,
    /** hash: waiter id -> "<permits>:<place lapses at, server ms>" */
    wants: `${tag}:semaphore:wants`,
    /** zset: acquisition id -> grant time (server ms), for a short window */
    grants: `${tag}:semaphore:grants`,
    /** string, short TTL: remembers the outcome of one release / addPermits call */
    op: (id: string) => `${tag}:semaphore:op:${id}`,
    channel: `${tag}:semaphore:released`,
  };
}

/** The semaphore whose permits have ids and leases. */
export function permitExpirableSemaphoreKeys(prefix: string, name: string) {
  const tag = tagOf(prefix, name);
  return {
    /** string, no TTL: the number of permits */
    total: `${tag}:expirable-semaphore:total`,
    /** zset: permit id -> lease end (server ms; "inf": no lease) */
    leases: `${tag}:expirable-semaphore:leases`,
    /** string, short TTL: remembers the outcome of one release / trySetPermits / addPermits call */
    op: (id: string) => `${tag}:expirable-semaphore:op:${id}`,
    channel: `${tag}:expirable-semaphore:released`,
  };
}

/** The count-down latch. */
export function countDownLatchKeys(prefix: string, name: string) {
  const tag = tagOf(prefix, name);
  return {
    /** string, no TTL while the count is above 0 */
    count: `${tag}:latch:count`,
    /** string, short TTL: remembers the outcome of one countDown / trySetCount / delete call */
    op: (id: string) => `${tag}:latch:op:${id}`,
    channel: `${tag}:latch:zero`,
  };
}

/** The kinds of key above, as the second part of their names. */
export type KeyKind = 'lock' | 'rw' | 'semaphore' | 'expirable-semaphore' | 'latch';

/** A key name taken apart: `<prefix>{<name>}:<kind>[:<part>]`. */
export interface ParsedKey {
  readonly name: string;
  readonly kind: KeyKind;
  /** What follows the kind (`queue`, `write`, `permits`, ...); '' for the kind's main key. */
  readonly part: string;
}

const KINDS: readonly KeyKind[] = ['lock', 'rw', 'semaphore', 'expirable-semaphore', 'latch'];

/** Takes a latchkey key apart (for `latchkey inspect`); undefined when it is not one. */
export function parseKey(prefix: string, key: string): ParsedKey | undefined {
  if (!key.startsWith(`${prefix}{`)) return undefined;
  const close = key.indexOf('}:', prefix.length + 1);
  if (close === -1) return undefined;
  const name = key.slice(prefix.length + 1, close);
  const rest = key.slice(close + 2);
  const kind = KINDS.find((k) => rest === k || rest.startsWith(`${k}:`));
  if (kind === undefined) return undefined;
  return { name, kind, part: rest.slice(kind.length + 1) };
}
