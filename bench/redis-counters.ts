/**
 * Redis' own counters, read by scenarios 7 and 8: per-command calls and time (`INFO
 * commandstats`), the server's CPU (`INFO cpu`) and memory (`MEMORY STATS`); and, on the client
 * side, which commands this process sent, so that the time of commands a client sends can be told
 * from the time of the same commands run inside scripts. Also a forced GC for the client's heap.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Redis } from 'ioredis';

/** One command's counters since the last CONFIG RESETSTAT. */
export interface CommandStat {
  readonly calls: number;
  /** Time Redis spent in it (µs): for a script, every command it ran included. */
  readonly usec: number;
}

/** `INFO commandstats`, by command name as Redis spells it (`evalsha`, `client|caching`). */
export async function commandStats(admin: Redis): Promise<Map<string, CommandStat>> {
  const info = await admin.info('commandstats');
  const stats = new Map<string, CommandStat>();
  for (const match of info.matchAll(/cmdstat_([\w|-]+):calls=(\d+),usec=(\d+)/g))
    stats.set(match[1]!, { calls: Number(match[2]), usec: Number(match[3]) });
  return stats;
}

/** Commands that are scripts: each is a round trip, and its time includes what it ran. */
export const isScript = (command: string): boolean =>
  /^(eval|evalsha|eval_ro|evalsha_ro|fcall|fcall_ro)$/.test(command);

/** The bench's own reading and resetting of the counters: never a library's cost. */
const isMeasurement = (command: string): boolean => /^(info|config)(\||$)/.test(command);

/** The server's CPU time so far, user and system (s). */
export async function redisCpuSeconds(admin: Redis): Promise<number> {
  const info = await admin.info('cpu');
  const field = (name: string): number => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(info)?.[1] ?? Number.NaN);
  return field('used_cpu_sys') + field('used_cpu_user');
}

/** Parts of `used_memory` that are no lock's: connections' buffers, script caches, replication. */
const NOT_DATA = ['clients.normal', 'clients.slaves', 'lua.caches', 'replication.backlog', 'aof.buffer'];

/**
 * Redis' memory (bytes), `used_memory` less what `MEMORY STATS` puts in connections' buffers
 * (a batch of 500 scripts sent in one tick grows a query buffer that Redis trims only later) and
 * script caches.
 */
export async function usedMemory(admin: Redis): Promise<number> {
  const stats = (await admin.call('MEMORY', 'STATS')) as unknown[];
  const field = (name: string): number => Number(stats[stats.indexOf(name) + 1] ?? 0);
  return field('total.allocated') - NOT_DATA.reduce((sum, name) => sum + field(name), 0);
}

/**
 * Polls usedMemory until two readings `everyMs` apart differ by less than 0.5% (the waiters of a
 * run have all reached Redis), or `capMs` passes.
 */
export async function settledMemory(admin: Redis, everyMs = 100, capMs = 5_000): Promise<number> {
  const until = Date.now() + capMs;
  let last = await usedMemory(admin);
  while (Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, everyMs));
    const now = await usedMemory(admin);
    if (Math.abs(now - last) < 0.005 * last) return now;
    last = now;
  }
  return last;
}

/**
 * Deletes every key matching `pattern`: what a run of scenario 8 leaves behind (latchkey's release
 * markers live for twice `commandTimeout`), so that it does not expire into the next run's figures.
 */
export async function sweep(admin: Redis, pattern: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await admin.scan(cursor, 'MATCH', pattern, 'COUNT', 1_000);
    if (keys.length > 0) await admin.unlink(...keys);
    cursor = next;
  } while (cursor !== '0');
}

/** Calls and Redis time (µs) of the commands clients sent over one window, split by kind. */
export interface SentCost {
  /** Scripts sent (EVAL/EVALSHA/FCALL): round trips. */
  scripts: number;
  /** Time Redis spent in those scripts, everything they ran included. */
  scriptUsec: number;
  /** Plain commands sent (a peer's `SET NX PX`, latchkey's re-tracking `EXISTS`, (un)subscribes). */
  plain: number;
  /** Their Redis time: each command's calls sent from here at that command's mean time per call. */
  plainUsec: number;
  /** Commands run inside the scripts (every call Redis counted that no client sent). */
  inner: number;
  /** The plain commands' names, most sent first. */
  plainNames: string[];
}

/**
 * Reads `stats` against `sent` (what this process sent while they were counted). A command that is
 * both sent plainly and run inside scripts (`EXISTS`, say) has one mean time per call in Redis'
 * counters, so its sent calls are costed at that mean.
 */
export function sentCost(stats: ReadonlyMap<string, CommandStat>, sent: ReadonlyMap<string, number>): SentCost {
  const cost: SentCost = { scripts: 0, scriptUsec: 0, plain: 0, plainUsec: 0, inner: 0, plainNames: [] };
  for (const [command, stat] of stats) {
    if (isMeasurement(command)) continue;
    if (isScript(command)) {
      cost.scripts += stat.calls;
      cost.scriptUsec += stat.usec;
      continue;
    }
    const plain = Math.min(stat.calls, sent.get(command) ?? 0);
    cost.plain += plain;
    cost.plainUsec += plain === 0 ? 0 : (stat.usec * plain) / stat.calls;
    cost.inner += stat.calls - plain;
    if (plain > 0) cost.plainNames.push(command);
  }
  cost.plainNames.sort((a, b) => (sent.get(b) ?? 0) - (sent.get(a) ?? 0));
  return cost;
}

/** Commands whose first argument is a subcommand in Redis' counters (`client|caching`). */
const WITH_SUBCOMMAND = new Set(['client', 'config', 'script', 'cluster', 'command', 'object', 'memory', 'function']);

type SendCommand = (this: Redis, command: { name: string; args: unknown[] }, ...rest: unknown[]) => unknown;

/**
 * Counts, by name, every command any ioredis connection of this process sends (the libraries'
 * own connections and the duplicates latchkey opens) until the returned function is called, which
 * answers the counts. It wraps `Redis.prototype.sendCommand`: no library exposes what it sends.
 */
export function countSentCommands(): () => Map<string, number> {
  const prototype = Redis.prototype as unknown as { sendCommand: SendCommand };
  const original = prototype.sendCommand;
  const sent = new Map<string, number>();
  prototype.sendCommand = function (command, ...rest) {
    const name = command.name.toLowerCase();
    const sub = command.args[0];
    const key =
      WITH_SUBCOMMAND.has(name) && (typeof sub === 'string' || Buffer.isBuffer(sub))
        ? `${name}|${String(sub).toLowerCase()}`
        : name;
    sent.set(key, (sent.get(key) ?? 0) + 1);
    return original.call(this, command, ...rest);
  };
  return () => {
    prototype.sendCommand = original;
    return sent;
  };
}

let collect: (() => void) | undefined;

/**
 * The JavaScript heap in use after a full collection (bytes). Without `--expose-gc`, V8's flag is
 * set at run time and `gc` taken from a fresh context, where V8 then installs it.
 */
export function heapAfterGc(): number {
  if (!collect) {
    const exposed = (globalThis as { gc?: () => void }).gc;
    if (exposed) collect = exposed;
    else {
      setFlagsFromString('--expose-gc');
      collect = runInNewContext('gc') as () => void;
    }
  }
  // Twice: the first collection's finalizers may free more.
  collect();
  collect();
  return process.memoryUsage().heapUsed;
}
