/**
 * Scenario 4: what keeping many locks alive costs Redis per renewal period.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Cluster, Redis } from 'ioredis';
import { Mutex } from 'redis-semaphore';
import { LockClient, LockLostError } from '../latchkey.js';
import { Redlock } from '../redlock.js';

export interface WatchdogResult {
  library: string;
  locks: number;
  /** How often this library renews one lock (ms). */
  periodMs: number;
  /** Scripts the clients sent (EVAL/EVALSHA: a round trip each) per period: the target's figure. */
  commandsPerPeriod: number;
  /**
   * Plain commands sent per period in the same round trips as the scripts: latchkey's loss
   * detection re-tracks the renewed keys (CLIENT CACHING + a multi-key EXISTS per batch). Runs
   * before 2026-11-26 lack it.
   */
  plainPerPeriod?: number;
  /** Commands the renewal scripts ran inside Redis per period (no round trip each). */
  innerPerPeriod: number;
  /** The target: at most one command sent per 1,000 locks per Redis node per period. */
  budget: number;
  /** A Cluster's row: per primary, the locks it holds and the commands sent to it per period. */
  nodes?: { locks: number; commandsPerPeriod: number }[];
}

/**
 * Calls since CONFIG RESETSTAT: script calls (round trips), the plain commands sent beside them
 * (CLIENT CACHING and EXISTS: no renewal script of any library measured here calls EXISTS, so
 * every EXISTS in the window was sent by a client), and the commands run inside the scripts.
 */
async function calls(admin: Redis): Promise<{ sent: number; plain: number; inner: number }> {
  const info = await admin.info('commandstats');
  let sent = 0;
  let plain = 0;
  let inner = 0;
  for (const match of info.matchAll(/cmdstat_([\w|]+):calls=(\d+)/g)) {
    const command = match[1]!;
    if (/^(info|config)/.test(command)) continue;
    if (/^(eval|evalsha|fcall)/.test(command)) sent += Number(match[2]);
    else if (/^(client\|caching|exists)$/.test(command)) plain += Number(match[2]);
    else inner += Number(match[2]); // renewals are scripts in every library measured here
  }
  return { sent, plain, inner };
}

/**
 * Counts from half a period after the third renewal round, on every node of `admins` (one
 * connection to each; `held`: the locks each holds): the first round loads the renewal script (a
 * NOSCRIPT reply, then the script itself, once per server and script), which is no cost per
 * period; holds taken over more than half a period come to share their rounds within two more;
 * and half a period puts the window's ends between two rounds.
 */
async function measure(
  admins: readonly Redis[],
  library: string,
  held: readonly number[],
  periodMs: number,
  periods: number,
): Promise<WatchdogResult> {
  await sleep(periodMs * 3.5);
  await Promise.all(admins.map((admin) => admin.config('RESETSTAT')));
  await sleep(periodMs * periods);
  const perNode = await Promise.all(admins.map(calls));
  const sum = (values: readonly number[]): number => values.reduce((a, b) => a + b, 0);
  return {
    library,
    locks: sum(held),
    periodMs,
    commandsPerPeriod: sum(perNode.map((node) => node.sent)) / periods,
    plainPerPeriod: sum(perNode.map((node) => node.plain)) / periods,
    innerPerPeriod: sum(perNode.map((node) => node.inner)) / periods,
    budget: sum(held.map((locks) => Math.ceil(locks / 1_000))),
    ...(admins.length > 1
      ? { nodes: held.map((locks, i) => ({ locks, commandsPerPeriod: perNode[i]!.sent / periods })) }
      : {}),
  };
}

/** Runs `fn` over `items`, 500 at a time. */
export async function inChunks<T>(items: readonly T[], fn: (item: T) => Promise<unknown>): Promise<void> {
  for (let i = 0; i < items.length; i += 500) await Promise.all(items.slice(i, i + 500).map(fn));
}

/**
 * latchkey: `count` locks held by one client, renewed by its one watchdog every watchdogTimeout /
 * 3, counted on every node of `admins` (a Cluster's locks spread over its primaries by name).
 */
async function latchkeyHolding(
  redis: Redis | Cluster,
  admins: readonly Redis[],
  library: string,
  count: number,
  leaseMs: number,
  periods: number,
): Promise<WatchdogResult> {
  const client = new LockClient(redis, { watchdogTimeout: leaseMs });
  try {
    const locks = Array.from({ length: count }, (_, i) => client.getLock(`bench:held:${i}`));
    await inChunks(locks, (lock) => lock.lock());
    // Only the held locks are keys of a Cluster's primaries here; one server holds them all.
    const held = admins.length > 1 ? await Promise.all(admins.map((admin) => admin.dbsize())) : [count];
    const result = await measure(admins, library, held, leaseMs / 3, periods);
    // A lock whose renewal came too late for its lease (a stalled machine) is reported lost, as it
    // must be: counted and printed, as for redis-semaphore, rather than ending the run.
    let lost = 0;
    await inChunks(locks, (lock) =>
      lock.unlock().catch((error: unknown) => {
        if (!(error instanceof LockLostError)) throw error;
        lost++;
      }),
    );
    if (lost > 0) process.stdout.write(`    ${library} lost ${lost} of its ${count} locks (late renewals)\n`);
    return result;
  } finally {
    await client.shutdown();
  }
}

/** latchkey on a Redis Cluster: the same as on one server, counted per primary (`admins`). */
export function watchdogOnCluster(
  cluster: Cluster,
  admins: readonly Redis[],
  count: number,
  leaseMs: number,
  periods: number,
): Promise<WatchdogResult> {
  return latchkeyHolding(cluster, admins, 'latchkey Lock, Cluster', count, leaseMs, periods);
}

/** latchkey on one server. */
function latchkey(
  redis: Redis,
  admin: Redis,
  count: number,
  leaseMs: number,
  periods: number,
): Promise<WatchdogResult> {
  return latchkeyHolding(redis, [admin], 'latchkey Lock', count, leaseMs, periods);
}

/** redis-semaphore: `count` Mutexes with lockTimeout = lease, each refreshing itself (every 0.8 x lease). */
async function redisSemaphore(
  redis: Redis,
  admin: Redis,
  count: number,
  leaseMs: number,
  periods: number,
): Promise<WatchdogResult> {
  // Its default onLockLost throws from a timer: on a loaded machine one late refresh would crash the run.
  let lost = 0;
  const onLockLost = (): void => void lost++;
  const mutexes = Array.from(
    { length: count },
    (_, i) => new Mutex(redis, `bench:held-rs:${i}`, { lockTimeout: leaseMs, onLockLost }),
  );
  await inChunks(mutexes, (mutex) => mutex.acquire());
  const result = await measure([admin], 'redis-semaphore', [count], leaseMs * 0.8, periods);
  await inChunks(mutexes, (mutex) => mutex.release().catch(() => undefined));
  if (lost > 0) process.stdout.write(`    redis-semaphore lost ${lost} of its ${count} locks (late refreshes)\n`);
  return result;
}

/** redlock: `count` routines in `using` (auto-extended 500 ms before the lease runs out). */
async function redlock(
  redis: Redis,
  admin: Redis,
  count: number,
  leaseMs: number,
  periods: number,
): Promise<WatchdogResult> {
  const instance = new Redlock([redis]);
  instance.on('error', () => undefined);
  let finish: () => void = () => undefined;
  const done = new Promise<void>((resolve) => (finish = resolve));
  let entered = 0;
  let allIn: () => void = () => undefined;
  const inside = new Promise<void>((resolve) => (allIn = resolve));
  const routines = Array.from({ length: count }, (_, i) =>
    instance.using([`bench:held-rl:${i}`], leaseMs, async () => {
      if (++entered === count) allIn();
      await done;
    }),
  );
  await inside;
  const result = await measure([admin], 'redlock', [count], leaseMs - 500, periods);
  finish();
  await Promise.allSettled(routines);
  return result;
}

/** Scenario 4: Redis' own counters while `count` locks are held and nothing else happens. */
export async function watchdogCost(
  open: () => Redis,
  admin: Redis,
  count: number,
  leaseMs: number,
  periods: number,
  progress: (line: string) => void,
): Promise<WatchdogResult[]> {
  const results: WatchdogResult[] = [];
  for (const run of [latchkey, redisSemaphore, redlock]) {
    const result = await run(open(), admin, count, leaseMs, periods);
    results.push(result);
    progress(
      `  ${result.library}: ${result.commandsPerPeriod.toFixed(1)} commands per ${Math.round(result.periodMs)} ms period (budget ${result.budget})`,
    );
  }
  return results;
}
