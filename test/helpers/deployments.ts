/**
 * Real local Redis deployments for tests of locks through failover, slot migration and restarts:
 * a Redis Cluster with replicas, a Sentinel group and a standalone server that restarts empty.
 *
 * Every process is a private redis-server on a free loopback port (never 6379), started by this
 * file and killed by PID when the test file ends (node:test `after`), with its clients closed
 * first. Every wait is bounded and fails with what it last saw. Nothing here uses latchkey
 * itself: the deployments are driven with raw admin commands over ioredis.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after } from 'node:test';
import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';
import {
  createClient,
  createCluster,
  createSentinel,
  type RedisClientOptions,
  type RedisClientType,
  type RedisClusterOptions,
  type RedisClusterType,
  type RedisSentinelOptions,
  type RedisSentinelType,
} from 'redis';
import { startRedisServer, type RedisProcess } from '../../src/cli/redis-server.js';
import type { LockClient } from '../../src/index.js';
import { clusterSlot } from '../../src/redis/cluster-slot.js';

// ---------------------------------------------------------------------------------------------
// Shared plumbing: clean-up, bounded waits, admin connections
// ---------------------------------------------------------------------------------------------

const cleanups: (() => Promise<void> | void)[] = [];
after(async () => {
  // Reverse order: clients (registered after their servers) close before the servers die.
  for (const cleanup of cleanups.splice(0).reverse()) {
    try {
      await cleanup();
    } catch {
      // already closed by the test, or already dead: carry on with the rest
    }
  }
});

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const noop = (): void => undefined;
const isAlive = (process: RedisProcess): boolean =>
  process.child.exitCode === null && process.child.signalCode === null;

/**
 * Polls `probe` every `every` ms until it returns a value (not undefined), failing after `ms`
 * with `what` and the last state the probe noted (or the last error it threw): a failover that
 * never happens must fail the test with a reason, not hang it.
 */
async function until<T>(
  what: string,
  ms: number,
  probe: (note: (state: string) => undefined) => Promise<T | undefined>,
  every = 50,
): Promise<T> {
  const deadline = Date.now() + ms;
  let last = 'nothing yet';
  const note = (state: string): undefined => {
    last = state;
    return undefined;
  };
  for (;;) {
    try {
      const value = await probe(note);
      if (value !== undefined) return value;
    } catch (error) {
      last = `error: ${error instanceof Error ? error.message : String(error)}`;
    }
    if (Date.now() > deadline) throw new Error(`${what} did not happen within ${ms} ms (last seen: ${last})`);
    await sleep(every);
  }
}

/** A field of an INFO reply (`undefined` when absent). */
function infoField(info: string, field: string): string | undefined {
  return new RegExp(`^${field}:(.*)$`, 'm').exec(info)?.[1]?.trim();
}

/**
 * One admin connection per server port, for the harness's own commands. Short timeouts: a dead or
 * frozen server must make a probe fail (and be retried), never hang it.
 */
class Admin {
  private readonly connections = new Map<number, Redis>();

  constructor() {
    cleanups.push(() => this.closeAll());
  }

  private connection(port: number): Redis {
    let redis = this.connections.get(port);
    // 'end': it gave up reconnecting (the server was away a while); a new one starts afresh.
    if (!redis || redis.status === 'end') {
      redis = new Redis({
        host: '127.0.0.1',
        port,
        enableReadyCheck: false,
        maxRetriesPerRequest: 1,
        commandTimeout: 3_000,
        connectTimeout: 1_000,
        retryStrategy: (times) => (times > 20 ? null : 50),
      });
      redis.on('error', noop);
      this.connections.set(port, redis);
    }
    return redis;
  }

  call(port: number, command: string, ...args: (string | number | Buffer)[]): Promise<unknown> {
    return this.connection(port).call(command, ...args);
  }

  /** Like call(), with bulk replies as Buffers (key names that need not be UTF-8). */
  callBuffer(port: number, command: string, ...args: (string | number | Buffer)[]): Promise<unknown> {
    return this.connection(port).callBuffer(command, ...args);
  }

  async text(port: number, command: string, ...args: (string | number)[]): Promise<string> {
    return String(await this.call(port, command, ...args));
  }

  /** Forgets the connection to a server that was killed (it would only retry in vain). */
  drop(port: number): void {
    this.connections.get(port)?.disconnect();
    this.connections.delete(port);
  }

  closeAll(): void {
    for (const redis of this.connections.values()) redis.disconnect();
    this.connections.clear();
  }
}

/**
 * Why a replica of the master on `master` does not have what the master had a moment ago, if one
 * does not. A replica whose link is up may still receive nothing for up to a second after a
 * diskless sync: the master starts its stream at the replica's first REPLCONF ACK. A failover to it
 * then would lose the writes made meanwhile, which no test means to exercise by accident.
 */
async function behind(admin: Admin, master: number, replicas: readonly number[]): Promise<string | undefined> {
  const wrote = Number(infoField(await admin.text(master, 'INFO', 'replication'), 'master_repl_offset'));
  for (const port of replicas) {
    const got = Number(infoField(await admin.text(port, 'INFO', 'replication'), 'slave_repl_offset'));
    if (!(got >= wrote)) return `replica ${port} at offset ${got} of ${master}'s ${wrote}`;
  }
  return undefined;
}

/**
 * Shuts `locks` down after the file, before the Redis clients and servers made before it close:
 * a test file's own `after` would run after this module's, with the servers already gone.
 */
export function shutDownAfterFile(locks: LockClient): LockClient {
  cleanups.push(() => locks.shutdown());
  return locks;
}

function trackIoredis<T extends Redis | Cluster>(client: T): T {
  client.on('error', noop);
  cleanups.push(() => void client.disconnect());
  return client;
}

/** Connects a node-redis client, Cluster or Sentinel (errors swallowed, destroyed after the file). */
async function connectNodeRedis<T extends NodeRedisClient | NodeRedisCluster | NodeRedisSentinel>(
  client: T,
): Promise<T> {
  client.on('error', noop);
  cleanups.push(() => {
    if (client.isOpen) void client.destroy();
  });
  await client.connect();
  return client;
}

/**
 * A plain ioredis client to one server, with no Cluster or Sentinel routing (errors swallowed,
 * closed after the file): to see what one node holds, or to write to a demoted master.
 */
export function directClient(node: { readonly host: string; readonly port: number }, options?: RedisOptions): Redis {
  return trackIoredis(new Redis({ host: node.host, port: node.port, ...options }));
}

/** The node-redis client types the factories return (default modules, RESP2). */
export type NodeRedisClient = RedisClientType;
export type NodeRedisCluster = RedisClusterType;
export type NodeRedisSentinel = RedisSentinelType;

// ---------------------------------------------------------------------------------------------
// Redis Cluster: 3 primaries with 1 replica each
// ---------------------------------------------------------------------------------------------

/** A redis-server of a deployment; its role changes with failovers, so ask the deployment. */
export interface DeploymentNode extends RedisProcess {
  /** `127.0.0.1:<port>`, as Redis reports addresses (MOVED, CLUSTER NODES, Sentinel replies). */
  readonly address: string;
  /** False once the process died (killed by the harness or a test). */
  readonly alive: boolean;
  /** True between freeze() and resume(): the harness then leaves the node out of its queries. */
  readonly frozen: boolean;
}

/** Wraps a process to know whether it is alive and frozen (a frozen node never answers). */
function deploymentNode<T extends object>(process: RedisProcess, extra: T): DeploymentNode & T {
  let frozen = false;
  return {
    ...process,
    ...extra,
    address: `${process.host}:${process.port}`,
    get alive() {
      return isAlive(process);
    },
    get frozen() {
      return frozen && isAlive(process);
    },
    freeze() {
      frozen = true;
      process.freeze();
    },
    resume() {
      frozen = false;
      process.resume();
    },
  };
}

/** Alive and not frozen: the harness may query it. */
const reachable = (node: DeploymentNode): boolean => node.alive && !node.frozen;

/** A node of the replicated cluster. */
export interface ClusterNode extends DeploymentNode {
  /** Its cluster node ID (CLUSTER MYID), as CLUSTER NODES, SETSLOT and REPLICATE use it. */
  readonly id: string;
}

/** A slot, or a key (or lock name) whose hash slot is meant: `k{tag}x` hashes as `tag`. */
export type SlotOrKey = number | string;

/** What a cluster failover did. */
export interface ClusterFailover {
  readonly slot: number;
  /** The primary before: demoted to a replica (manual failover) or killed. */
  readonly from: ClusterNode;
  /** The replica that now serves the slot. */
  readonly to: ClusterNode;
  /** From the command (or SIGKILL) until every live node agreed and said cluster_state:ok. */
  readonly ms: number;
}

/** What a slot migration did. */
export interface SlotMigration {
  readonly slot: number;
  readonly from: ClusterNode;
  readonly to: ClusterNode;
  /** Keys moved by MIGRATE (keys that clients created meanwhile through ASK are not counted). */
  readonly keys: number;
  readonly ms: number;
}

/**
 * A Redis Cluster of 3 primaries with 1 replica each, slots split evenly (0-5460, 5461-10922,
 * 10923-16383 on nodes 0, 1, 2; nodes 3, 4, 5 replicate them at start). Roles and slots move with
 * the operations, so everything here asks the cluster rather than caching.
 */
export interface ReplicatedCluster {
  /** All six nodes as started, killed ones included. */
  readonly nodes: readonly ClusterNode[];
  /**
   * A new ioredis Cluster client seeded with the live nodes (errors swallowed, closed after the
   * file). `options` go to the Cluster constructor as they are.
   */
  ioredis(options?: ClusterOptions): Cluster;
  /**
   * A connected node-redis Cluster client seeded with the live nodes (closed after the file).
   * node-redis 5 re-reads the topology only on MOVED/ASK: a client made before killPrimary()
   * keeps waiting on the dead node for that node's slots (redis/node-redis#2806), so make a new
   * one after it. It does not retry TRYAGAIN either (ioredis does).
   */
  nodeRedis(options?: Partial<RedisClusterOptions>): Promise<NodeRedisCluster>;
  /** The primary that serves the slot now (the claim with the highest config epoch). */
  primaryOf(slotOrKey: SlotOrKey): Promise<ClusterNode>;
  /** The live primaries that serve slots now, by first slot. */
  primaries(): Promise<ClusterNode[]>;
  /** The live replicas of `primary` now. */
  replicasOf(primary: ClusterNode): Promise<ClusterNode[]>;
  /** The slots `primary` serves now. */
  slotsOf(primary: ClusterNode): Promise<number[]>;
  /**
   * A fresh name (no braces) whose slot `primary` serves now. A name hashes like the latchkey
   * keys built from it (`latchkey:{name}:lock`), so it works as a raw key and as a lock name.
   */
  nameOn(primary: ClusterNode, prefix?: string): Promise<string>;
  /** A fresh name (no braces) that hashes to `slot`, as a raw key and as a lock name. */
  nameInSlot(slot: number, prefix?: string): string;
  /**
   * CLUSTER FAILOVER on a replica of the slot's primary; resolves once every live node agrees on
   * the new primary, the old one replicates from it in sync, and the cluster is ok.
   */
  manualFailover(slotOrKey: SlotOrKey): Promise<ClusterFailover>;
  /**
   * SIGKILLs the slot's primary; resolves once every live node agrees that its replica took over
   * and says cluster_state:ok again. The dead node stays known to the cluster (flagged fail) and
   * the new primary has no replica left. `afterKill` runs once the primary is dead, before its
   * replica takes over: calls it makes find the slot served by no live node.
   */
  killPrimary(slotOrKey: SlotOrKey, options?: { afterKill?: () => void }): Promise<ClusterFailover>;
  /**
   * Moves one slot with its keys to `to`, as `redis-cli --cluster reshard` does: SETSLOT
   * IMPORTING / MIGRATING, GETKEYSINSLOT + MIGRATE in batches, then SETSLOT NODE on the target,
   * the source and the other primaries. Clients may keep writing meanwhile (they get ASK,
   * TRYAGAIN and MOVED). Resolves once every live node agrees and the cluster is ok.
   */
  migrateSlot(
    slot: number,
    to: ClusterNode,
    options?: {
      batch?: number;
      /** Awaited before each MIGRATE (`moved`: keys moved so far): holds the slot mid-migration. */
      beforeBatch?: (moved: number) => Promise<void>;
      /** Awaited once every key moved, before SETSLOT NODE: the keys are on the target, the slot still moving. */
      beforeSettle?: () => Promise<void>;
    },
  ): Promise<SlotMigration>;
  /** Waits until every live node agrees on the topology, says cluster_state:ok, replicas in sync. */
  settled(ms?: number): Promise<void>;
}

/**
 * `cluster-node-timeout` 1000 ms: a killed primary is flagged FAIL and replaced in ~2-3 s.
 * `cluster-replica-validity-factor 0`: a replica may always take over (no "data too old").
 * `cluster-allow-replica-migration no`: replicas stay with their primary, and a primary that
 * loses its last slot stays a primary, so the topology only changes when a test changes it.
 * `repl-diskless-sync-delay 0`: a replica's full sync starts at once, not after 5 s.
 */
const CLUSTER_ARGS = [
  '--cluster-enabled',
  'yes',
  '--cluster-config-file',
  'nodes.conf',
  '--cluster-node-timeout',
  '1000',
  '--cluster-replica-validity-factor',
  '0',
  '--cluster-allow-replica-migration',
  'no',
  '--repl-diskless-sync-delay',
  '0',
];

const SLOT_RANGES = [
  [0, 5460],
  [5461, 10922],
  [10923, 16383],
] as const;

/** One line of CLUSTER NODES, as one node sees one node. */
interface NodeLine {
  readonly id: string;
  readonly port: number;
  readonly flags: ReadonlySet<string>;
  readonly masterId: string | undefined;
  readonly epoch: number;
  readonly ranges: readonly (readonly [number, number])[];
  /** Slots in MIGRATING or IMPORTING state (listed on the node's own line only). */
  readonly moving: readonly string[];
}

function parseClusterNodes(text: string): NodeLine[] {
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      const [id = '', address = '', flags = '', master = '-', , , epoch = '0', , ...slots] = line.trim().split(' ');
      const port = Number(/:(\d+)@/.exec(address)?.[1] ?? 0);
      const ranges: [number, number][] = [];
      const moving: string[] = [];
      for (const item of slots) {
        if (item.startsWith('[')) moving.push(item);
        else {
          const [from, to = from] = item.split('-');
          ranges.push([Number(from), Number(to)]);
        }
      }
      return {
        id,
        port,
        flags: new Set(flags.split(',')),
        masterId: master === '-' ? undefined : master,
        epoch: Number(epoch),
        ranges,
        moving,
      };
    });
}

const serves = (line: NodeLine, slot: number): boolean =>
  line.flags.has('master') && line.ranges.some(([from, to]) => slot >= from && slot <= to);

let nameCounter = 0;

/** A fresh name whose slot passes `wanted` (names never repeat within a test file). */
function findName(prefix: string, wanted: (slot: number) => boolean): string {
  for (let tries = 0; tries < 1_000_000; tries++) {
    const name = `${prefix}:${nameCounter++}`;
    if (wanted(clusterSlot(name))) return name;
  }
  throw new Error(`no name with prefix ${prefix} hashes to a wanted slot`);
}

/**
 * Starts the 3 × (primary + replica) cluster and waits until it is fully formed: every node says
 * cluster_state:ok and agrees on the topology, every replica is in sync. ~2.5 s: a cluster
 * primary refuses to say ok in its first 2 s (CLUSTER_WRITABLE_DELAY).
 */
export async function startReplicatedCluster(): Promise<ReplicatedCluster> {
  const processes = await Promise.all([0, 1, 2, 3, 4, 5].map(() => startRedisServer(CLUSTER_ARGS)));
  for (const process of processes) cleanups.push(() => process.stop(true));
  const admin = new Admin();
  const ids = await Promise.all(processes.map((process) => admin.text(process.port, 'CLUSTER', 'MYID')));
  const nodes: ClusterNode[] = processes.map((process, i) => deploymentNode(process, { id: ids[i]! }));
  const byId = new Map(nodes.map((node) => [node.id, node]));
  const live = (): ClusterNode[] => nodes.filter(reachable);
  const isLive = (id: string): boolean => reachable(nodeOf(id));
  const nodeOf = (id: string): ClusterNode => {
    const node = byId.get(id);
    if (!node) throw new Error(`unknown cluster node ${id}`);
    return node;
  };
  const slotOf = (slotOrKey: SlotOrKey): number => (typeof slotOrKey === 'number' ? slotOrKey : clusterSlot(slotOrKey));

  // Distinct config epochs before meeting (as redis-cli does): no epoch collisions to resolve.
  await Promise.all(
    [0, 1, 2].map(async (i) => {
      const port = nodes[i]!.port;
      await admin.call(port, 'CLUSTER', 'SET-CONFIG-EPOCH', i + 1);
      await admin.call(port, 'CLUSTER', 'ADDSLOTSRANGE', SLOT_RANGES[i]![0], SLOT_RANGES[i]![1]);
    }),
  );
  // Every node meets every other: no waiting for gossip to spread the node table.
  await Promise.all(
    nodes.flatMap((a, i) => nodes.slice(i + 1).map((b) => admin.call(a.port, 'CLUSTER', 'MEET', b.host, b.port))),
  );
  await until('the cluster nodes meeting each other', 10_000, async (note) => {
    const tables = await Promise.all(nodes.map((node) => admin.text(node.port, 'CLUSTER', 'NODES')));
    const pending = tables.map(parseClusterNodes).filter((lines) => {
      return lines.length < 6 || lines.some((line) => line.flags.has('handshake') || line.flags.has('noaddr'));
    });
    note(`${pending.length} nodes do not know all others yet`);
    return pending.length === 0 ? true : undefined;
  });
  await Promise.all([3, 4, 5].map((i) => admin.call(nodes[i]!.port, 'CLUSTER', 'REPLICATE', nodes[i - 3]!.id)));

  /**
   * The view every live node shares of the cluster, or why there is none yet. `strict` (for
   * settling) also wants cluster_state:ok everywhere, fail flags on exactly the unreachable nodes,
   * and no slot in migration.
   */
  async function views(strict: boolean): Promise<{ lines: NodeLine[] } | { disagreement: string }> {
    const alive = live();
    const [tables, infos] = await Promise.all([
      Promise.all(alive.map((node) => admin.text(node.port, 'CLUSTER', 'NODES'))),
      strict ? Promise.all(alive.map((node) => admin.text(node.port, 'CLUSTER', 'INFO'))) : [],
    ]);
    const notOk = strict ? alive.filter((_, i) => infoField(infos[i]!, 'cluster_state') !== 'ok') : [];
    if (notOk.length > 0) return { disagreement: `cluster_state not ok on ${notOk.map((n) => n.port).join(', ')}` };
    const parsed = tables.map(parseClusterNodes);
    const signatures = parsed.map((lines) =>
      lines
        .map((line) => {
          // A dead node's role may differ between views; that it failed must not (once settled).
          const failed = line.flags.has('fail') ? 'fail' : 'not-failed';
          if (!isLive(line.id)) return `${line.port}:${strict ? failed : 'unreachable'}`;
          const role = line.flags.has('master') ? 'master' : `replica-of-${byId.get(line.masterId ?? '')?.port}`;
          const ranges = line.ranges.map(([from, to]) => `${from}-${to}`).join(',');
          const flagged = strict ? ['fail', 'pfail'].filter((flag) => line.flags.has(flag)).join(',') : '';
          return `${line.port}:${role}:${ranges}:${flagged}`;
        })
        .sort()
        .join(' '),
    );
    const differing = signatures.findIndex((signature) => signature !== signatures[0]);
    if (differing !== -1) {
      return {
        disagreement: `node ${alive[0]!.port} sees [${signatures[0]}], ${alive[differing]!.port} sees [${signatures[differing]}]`,
      };
    }
    const lines = parsed[0]!;
    if (!strict) return { lines };
    const failing = lines.filter((line) => isLive(line.id) === (line.flags.has('fail') || line.flags.has('pfail')));
    if (failing.length > 0) return { disagreement: `fail flags do not match liveness: [${signatures[0]}]` };
    const moving = parsed.flat().filter((line) => line.moving.length > 0);
    if (moving.length > 0) return { disagreement: `slots still moving: ${moving.flatMap((l) => l.moving).join(' ')}` };
    return { lines };
  }

  /** Waits for agreement plus replicas in sync, and returns the agreed view. */
  async function settle(
    what: string,
    ms: number,
    expect?: (lines: NodeLine[]) => string | undefined,
  ): Promise<NodeLine[]> {
    return until(what, ms, async (note) => {
      const view = await views(true);
      if ('disagreement' in view) return note(view.disagreement);
      const unmet = expect?.(view.lines);
      if (unmet) return note(unmet);
      const replicas = view.lines.filter((line) => line.flags.has('slave') && isLive(line.id));
      for (const line of replicas) {
        const info = await admin.text(line.port, 'INFO', 'replication');
        if (infoField(info, 'master_link_status') !== 'up') return note(`replica ${line.port} not in sync yet`);
        const master = view.lines.find((other) => other.id === line.masterId);
        const lagging = master && (await behind(admin, master.port, [line.port]));
        if (lagging) return note(lagging);
      }
      return view.lines;
    });
  }

  async function agreedLines(): Promise<NodeLine[]> {
    return until('the cluster nodes agreeing on the topology', 10_000, async (note) => {
      const view = await views(false);
      return 'disagreement' in view ? note(view.disagreement) : view.lines;
    });
  }

  await settle('the replicated cluster forming', 15_000, (lines) => {
    const replicas = lines.filter((line) => line.flags.has('slave')).length;
    return replicas === 3 ? undefined : `${replicas} of 3 replicas attached`;
  });

  /** The slot's owner per the highest config epoch among the claims live nodes know of. */
  async function ownerLine(slot: number): Promise<NodeLine> {
    const tables = await Promise.allSettled(live().map((node) => admin.text(node.port, 'CLUSTER', 'NODES')));
    const answered = tables.flatMap((table) => (table.status === 'fulfilled' ? [table.value] : []));
    let best: NodeLine | undefined;
    for (const line of answered.flatMap(parseClusterNodes)) {
      if (serves(line, slot) && !line.flags.has('fail') && (!best || line.epoch > best.epoch)) best = line;
    }
    if (!best) throw new Error(`no live node serves slot ${slot}`);
    return best;
  }

  async function replicaLinesOf(primary: ClusterNode): Promise<NodeLine[]> {
    const lines = await agreedLines();
    return lines.filter((line) => line.masterId === primary.id && line.flags.has('slave') && isLive(line.id));
  }

  const cluster: ReplicatedCluster = {
    nodes,

    ioredis(options) {
      return trackIoredis(
        new Cluster(
          live().map(({ host, port }) => ({ host, port })),
          options,
        ),
      );
    },

    async nodeRedis(options) {
      const client = createCluster({
        rootNodes: live().map(({ url }) => ({ url })),
        ...options,
      }) as unknown as NodeRedisCluster;
      return connectNodeRedis(client);
    },

    async primaryOf(slotOrKey) {
      return nodeOf((await ownerLine(slotOf(slotOrKey))).id);
    },

    async primaries() {
      const lines = await agreedLines();
      return lines
        .filter((line) => line.flags.has('master') && line.ranges.length > 0 && isLive(line.id))
        .sort((a, b) => a.ranges[0]![0] - b.ranges[0]![0])
        .map((line) => nodeOf(line.id));
    },

    async replicasOf(primary) {
      return (await replicaLinesOf(primary)).map((line) => nodeOf(line.id));
    },

    async slotsOf(primary) {
      const line = (await agreedLines()).find((l) => l.id === primary.id);
      const slots: number[] = [];
      for (const [from, to] of line?.flags.has('master') ? line.ranges : []) {
        for (let slot = from; slot <= to; slot++) slots.push(slot);
      }
      return slots;
    },

    async nameOn(primary, prefix = 'key') {
      const slots = new Set(await cluster.slotsOf(primary));
      if (slots.size === 0) throw new Error(`node ${primary.port} serves no slot`);
      return findName(prefix, (slot) => slots.has(slot));
    },

    nameInSlot(slot, prefix = 'key') {
      return findName(prefix, (s) => s === slot);
    },

    async manualFailover(slotOrKey) {
      const slot = slotOf(slotOrKey);
      const from = await cluster.primaryOf(slot);
      const [replica] = await replicaLinesOf(from);
      if (!replica) throw new Error(`primary ${from.port} of slot ${slot} has no live replica to fail over to`);
      const to = nodeOf(replica.id);
      const started = Date.now();
      await admin.call(to.port, 'CLUSTER', 'FAILOVER');
      await settle(`manual failover of slot ${slot} from ${from.port} to ${to.port}`, 15_000, (lines) => {
        const owner = lines.find((line) => serves(line, slot));
        const old = lines.find((line) => line.id === from.id);
        if (owner?.id !== to.id) return `slot ${slot} still served by ${owner?.port}`;
        if (old?.masterId !== to.id) return `old primary ${from.port} not yet a replica of ${to.port}`;
        return undefined;
      });
      return { slot, from, to, ms: Date.now() - started };
    },

    async killPrimary(slotOrKey, { afterKill } = {}) {
      const slot = slotOf(slotOrKey);
      const from = await cluster.primaryOf(slot);
      const [replica] = await replicaLinesOf(from);
      if (!replica) throw new Error(`primary ${from.port} of slot ${slot} has no live replica to take over`);
      const to = nodeOf(replica.id);
      const started = Date.now();
      await from.stop(true);
      admin.drop(from.port);
      afterKill?.();
      await settle(`replica ${to.port} replacing killed primary ${from.port} (slot ${slot})`, 20_000, (lines) => {
        const owner = lines.find((line) => serves(line, slot));
        return owner?.id === to.id ? undefined : `slot ${slot} still served by ${owner?.port}`;
      });
      return { slot, from, to, ms: Date.now() - started };
    },

    async migrateSlot(slot, to, { batch = 100, beforeBatch, beforeSettle } = {}) {
      const from = await cluster.primaryOf(slot);
      const started = Date.now();
      if (from.id === to.id) return { slot, from, to, keys: 0, ms: 0 };
      const lines = await agreedLines();
      if (!lines.find((line) => line.id === to.id)?.flags.has('master') || !reachable(to)) {
        throw new Error(`node ${to.port} is not a live primary: cannot migrate slot ${slot} to it`);
      }
      // Importing first: the target must accept ASKING before the source starts redirecting.
      await admin.call(to.port, 'CLUSTER', 'SETSLOT', slot, 'IMPORTING', from.id);
      await admin.call(from.port, 'CLUSTER', 'SETSLOT', slot, 'MIGRATING', to.id);
      let keys = 0;
      for (;;) {
        const batchKeys = (await admin.callBuffer(from.port, 'CLUSTER', 'GETKEYSINSLOT', slot, batch)) as Buffer[];
        if (batchKeys.length === 0) break;
        await beforeBatch?.(keys);
        // NOKEY: every key of the batch expired or was deleted meanwhile. BUSYKEY would mean the key
        // is on both nodes, which ASK routing rules out: fail loudly rather than REPLACE blindly.
        const reply = await admin.call(from.port, 'MIGRATE', to.host, to.port, '', 0, 10_000, 'KEYS', ...batchKeys);
        if (reply !== 'OK' && reply !== 'NOKEY') throw new Error(`MIGRATE of slot ${slot} replied ${String(reply)}`);
        keys += batchKeys.length;
      }
      await beforeSettle?.();
      // Target first (it then claims the slot with a new epoch), then the source, then the rest
      // (redis-cli's order, see redis#7116).
      await admin.call(to.port, 'CLUSTER', 'SETSLOT', slot, 'NODE', to.id);
      await admin.call(from.port, 'CLUSTER', 'SETSLOT', slot, 'NODE', to.id).catch((error: Error) => {
        // The source turned into a replica after losing its last slot: redis-cli accepts this too.
        if (!error.message.includes('only with masters')) throw error;
      });
      const others = lines.filter(
        (line) => line.flags.has('master') && line.id !== to.id && line.id !== from.id && isLive(line.id),
      );
      await Promise.all(others.map((line) => admin.call(line.port, 'CLUSTER', 'SETSLOT', slot, 'NODE', to.id)));
      await settle(`slot ${slot} moving from ${from.port} to ${to.port}`, 10_000, (view) => {
        const owner = view.find((line) => serves(line, slot));
        return owner?.id === to.id ? undefined : `slot ${slot} still served by ${owner?.port}`;
      });
      return { slot, from, to, keys, ms: Date.now() - started };
    },

    async settled(ms = 15_000) {
      await settle('the cluster settling', ms);
    },
  };
  return cluster;
}

// ---------------------------------------------------------------------------------------------
// Sentinel: 1 master, 2 replicas, 3 Sentinels
// ---------------------------------------------------------------------------------------------

/** What a Sentinel failover did. */
export interface SentinelFailover {
  /** The master before (demoted by a planned failover, killed otherwise). */
  readonly from: DeploymentNode;
  /** The replica the Sentinels promoted. */
  readonly to: DeploymentNode;
  /** From the command (or SIGKILL) until every Sentinel named the new master. */
  readonly promotedMs: number;
  /**
   * Planned failover: from the command until the old master said role:slave (until then it
   * still accepted writes). Undefined when the old master was killed.
   */
  readonly demotedMs: number | undefined;
  /** Until everything settled: every live replica in sync with the new master, Sentinels agreed. */
  readonly ms: number;
}

/**
 * A master with 2 replicas watched by 3 Sentinels (quorum 2). Roles move with failovers: ask
 * master() rather than caching a node.
 */
export interface SentinelGroup {
  /** The master name the Sentinels monitor. */
  readonly name: string;
  /** The three data nodes as started (node 0 was the first master), killed ones included. */
  readonly nodes: readonly DeploymentNode[];
  readonly sentinels: readonly DeploymentNode[];
  /**
   * A new ioredis client that finds the master through the Sentinels (errors swallowed, closed
   * after the file). `options` are passed through (e.g. `failoverDetector: true`).
   *
   * With `failoverDetector: true`, ioredis 5.11 may end the client for good when the master was
   * killed: the detector of the dead connection fires on +switch-master while a reconnect is asking
   * the Sentinels for the master, that connect() throws "Connection is closed." and the status
   * becomes 'end' (~1 run in 4 under load). Check `status` after failoverBeforeReplication().
   */
  ioredis(options?: RedisOptions): Redis;
  /** A connected node-redis Sentinel client (closed after the file). */
  nodeRedis(options?: Partial<RedisSentinelOptions>): Promise<NodeRedisSentinel>;
  /** The master now, per the first Sentinel that answers. */
  master(): Promise<DeploymentNode>;
  /** The live data nodes that replicate from the master now (per their INFO replication). */
  replicas(): Promise<DeploymentNode[]>;
  /**
   * SENTINEL FAILOVER: resolves once every Sentinel names the new master, the old master was
   * reconfigured as its replica and is in sync. Until demotedMs, the old master still takes writes.
   */
  plannedFailover(): Promise<SentinelFailover>;
  /**
   * The write-lost case: freezes (SIGSTOP) both replicas and cuts their links at the master
   * (CLIENT KILL TYPE replica: a frozen replica's kernel would otherwise still buffer what the
   * master sends), runs `write` against the master (which replicates to no one), SIGKILLs the
   * master, resumes the replicas and resolves once the Sentinels promoted one of them. What
   * `write` wrote exists on no surviving node.
   */
  failoverBeforeReplication(write: (master: DeploymentNode) => Promise<void>): Promise<SentinelFailover>;
  /** Waits until the Sentinels agree, know each other and every live replica is in sync. */
  settled(ms?: number): Promise<void>;
}

/** Data nodes: a replica's full sync starts at once (the default waits 5 s for more replicas). */
const DATA_ARGS = ['--repl-diskless-sync-delay', '0'];

/**
 * Sentinel timings, set at run time with SENTINEL DEBUG (Redis 7.0+; not config-file options).
 *
 * What keeps the old master of a planned failover a writable master: SENTINEL FAILOVER promotes a
 * replica and repoints the other replicas, but leaves the old master alone. After the switch the
 * Sentinels list it as a replica of the new master; it still reports role:master, and a Sentinel
 * sends it REPLICAOF (+ CLIENT KILL of its clients: "+convert-to-slave" in sentinel.c) only once
 * it has reported so for more than 4 × publish-period, checked on each INFO reply, every
 * info-period. With the defaults (2000, 10000) that is ~11 s after the command (measured here;
 * the group then takes ~21 s to settle); with the values below, ~2.1 s.
 *
 * - publish-period (default 2000): hello messages (Sentinels find each other in ~0.3 s, not 2 s)
 *   and the 4 × publish-period wait above.
 * - info-period (default 10000): INFO to masters and replicas (the demotion check above; new
 *   replicas seen sooner). During a failover replicas get INFO every 1000 ms whatever this says
 *   (hard-coded), which is most of the ~1 s a planned promotion takes. SENTINEL FAILOVER wants a
 *   replica whose INFO is fresher than 3 × info-period: plannedFailover() retries if refused.
 * - ask-period (default 1000): how often a Sentinel asks the others whether the master is down
 *   and for their votes: faster ODOWN and election.
 * - ping-period (default 1000): 500, so a dead master is noticed sooner; not lower, since a
 *   replica is a failover candidate only if it answered a PING (and, while the master is down,
 *   an INFO, sent every 1000 ms then) within 5 × ping-period.
 */
const SENTINEL_DEBUG = ['info-period', 250, 'publish-period', 250, 'ask-period', 250, 'ping-period', 500];

/**
 * down-after 1000 ms: the master is subjectively down after 1 s without a reply.
 * failover-timeout 3000 ms: an aborted or failed failover is retried after 2 × this (6 s), and
 * the election times out after min(10 s, this).
 */
const SENTINEL_DOWN_AFTER_MS = 1_000;
const SENTINEL_FAILOVER_TIMEOUT_MS = 3_000;

let groupCounter = 0;

/**
 * Starts the master, its 2 replicas (in sync) and 3 Sentinels, and waits until every Sentinel
 * knows both replicas and the 2 other Sentinels, so that a failover can start at once.
 */
export async function startSentinelGroup(): Promise<SentinelGroup> {
  const name = `latchkey-group-${process.pid}-${groupCounter++}`;
  const admin = new Admin();
  const toNode = (process: RedisProcess): DeploymentNode => deploymentNode(process, {});
  const nodes = (await Promise.all([0, 1, 2].map(() => startRedisServer(DATA_ARGS)))).map(toNode);
  for (const node of nodes) cleanups.push(() => node.stop(true));
  const [first] = nodes as [DeploymentNode, ...DeploymentNode[]];
  await Promise.all(nodes.slice(1).map((node) => admin.call(node.port, 'REPLICAOF', first.host, first.port)));
  // Replicas must be attached before the Sentinels start: a Sentinel learns replicas from the
  // master's INFO, which it sends at once, then only every info-period.
  await until('the replicas syncing with the master', 10_000, async (note) => {
    for (const node of nodes.slice(1)) {
      const info = await admin.text(node.port, 'INFO', 'replication');
      if (infoField(info, 'master_link_status') !== 'up') return note(`replica ${node.port} not in sync`);
    }
    const lagging = await behind(
      admin,
      first.port,
      nodes.slice(1).map((node) => node.port),
    );
    return lagging ? note(lagging) : true;
  });

  const dir = mkdtempSync(join(tmpdir(), 'latchkey-sentinels-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const sentinels = await Promise.all(
    [0, 1, 2].map(async (i) => {
      const config = join(dir, `sentinel-${i}.conf`);
      writeFileSync(
        config,
        [
          `sentinel monitor ${name} ${first.host} ${first.port} 2`,
          `sentinel down-after-milliseconds ${name} ${SENTINEL_DOWN_AFTER_MS}`,
          `sentinel failover-timeout ${name} ${SENTINEL_FAILOVER_TIMEOUT_MS}`,
          '',
        ].join('\n'),
      );
      // redis-server <config> --sentinel: the config file comes first and must be writable.
      const sentinel = toNode(await startRedisServer([], [config, '--sentinel']));
      cleanups.push(() => sentinel.stop(true));
      await admin.call(sentinel.port, 'SENTINEL', 'DEBUG', ...SENTINEL_DEBUG);
      return sentinel;
    }),
  );
  const byPort = new Map(nodes.map((node) => [node.port, node]));
  const nodeAt = (port: number): DeploymentNode => {
    const node = byPort.get(port);
    if (!node) throw new Error(`no data node on port ${port}`);
    return node;
  };

  /** Every Sentinel's master address, as ports (throws if one does not answer). */
  const mastersSeen = (): Promise<number[]> =>
    Promise.all(
      sentinels.map(async (sentinel) => {
        const [, port] = (await admin.call(sentinel.port, 'SENTINEL', 'GET-MASTER-ADDR-BY-NAME', name)) as string[];
        return Number(port);
      }),
    );

  /** One Sentinel's view of the master's replicas, as field maps. */
  async function sentinelReplicas(sentinel: DeploymentNode): Promise<Map<string, string>[]> {
    const replies = (await admin.call(sentinel.port, 'SENTINEL', 'REPLICAS', name)) as string[][];
    return replies.map((fields) => {
      const map = new Map<string, string>();
      for (let i = 0; i + 1 < fields.length; i += 2) map.set(fields[i]!, fields[i + 1]!);
      return map;
    });
  }

  /** Undefined when settled on `master`, else why not. */
  async function unsettled(master: DeploymentNode): Promise<string | undefined> {
    const seen = await mastersSeen();
    if (seen.some((port) => port !== master.port)) return `Sentinels name masters ${seen.join(', ')}`;
    const role = infoField(await admin.text(master.port, 'INFO', 'replication'), 'role');
    if (role !== 'master') return `${master.port} reports role ${role}`;
    const replicas = nodes.filter((node) => reachable(node) && node !== master);
    for (const node of replicas) {
      const info = await admin.text(node.port, 'INFO', 'replication');
      if (Number(infoField(info, 'master_port')) !== master.port || infoField(info, 'master_link_status') !== 'up') {
        return `${node.port} not in sync with ${master.port}`;
      }
    }
    const lagging = await behind(
      admin,
      master.port,
      replicas.map((node) => node.port),
    );
    if (lagging) return lagging;
    for (const sentinel of sentinels) {
      const masterInfo = (await admin.call(sentinel.port, 'SENTINEL', 'MASTER', name)) as string[];
      const others = Number(masterInfo[masterInfo.indexOf('num-other-sentinels') + 1]);
      if (others !== sentinels.length - 1) return `Sentinel ${sentinel.port} knows ${others} other Sentinels`;
      const known = await sentinelReplicas(sentinel);
      for (const node of replicas) {
        const entry = known.find((fields) => Number(fields.get('port')) === node.port);
        const flags = entry?.get('flags') ?? 'unknown';
        if (flags !== 'slave' || entry?.get('master-link-status') !== 'ok') {
          return `Sentinel ${sentinel.port} sees replica ${node.port} as ${flags}`;
        }
      }
    }
    return undefined;
  }

  const settle = (what: string, ms: number, master: () => Promise<DeploymentNode>): Promise<true> =>
    until(what, ms, async (note) => {
      const reason = await unsettled(await master());
      return reason ? note(reason) : true;
    });

  await settle('the Sentinel group forming', 15_000, () => Promise.resolve(first));

  const group: SentinelGroup = {
    name,
    nodes,
    sentinels,

    ioredis(options) {
      return trackIoredis(
        new Redis({ sentinels: sentinels.map(({ host, port }) => ({ host, port })), name, ...options }),
      );
    },

    async nodeRedis(options) {
      const client = createSentinel({
        name,
        sentinelRootNodes: sentinels.map(({ host, port }) => ({ host, port })),
        ...options,
      }) as unknown as NodeRedisSentinel;
      return connectNodeRedis(client);
    },

    async master() {
      let lastError: unknown;
      for (const sentinel of sentinels.filter(reachable)) {
        try {
          const [, port] = (await admin.call(sentinel.port, 'SENTINEL', 'GET-MASTER-ADDR-BY-NAME', name)) as string[];
          return nodeAt(Number(port));
        } catch (error) {
          lastError = error;
        }
      }
      throw lastError instanceof Error ? lastError : new Error('no Sentinel answered');
    },

    async replicas() {
      const master = await group.master();
      const replicas: DeploymentNode[] = [];
      for (const node of nodes.filter((n) => reachable(n) && n !== master)) {
        const info = await admin.text(node.port, 'INFO', 'replication');
        if (Number(infoField(info, 'master_port')) === master.port) replicas.push(node);
      }
      return replicas;
    },

    async plannedFailover() {
      const from = await group.master();
      const leader = sentinels[0]!;
      // Retried while refused (-NOGOODSLAVE: no replica passed the freshness checks just now).
      const ask = (): Promise<true> =>
        until(`Sentinel ${leader.port} accepting FAILOVER`, 5_000, async () => {
          await admin.call(leader.port, 'SENTINEL', 'FAILOVER', name);
          return true as const;
        });
      const started = Date.now();
      await ask();
      let demotedMs: number | undefined;
      const to = await until(
        `Sentinels promoting a replica of ${from.port}`,
        15_000,
        async (note) => {
          if (demotedMs === undefined) {
            const role = infoField(await admin.text(from.port, 'INFO', 'replication'), 'role');
            if (role === 'slave') demotedMs = Date.now() - started;
          }
          const seen = await mastersSeen();
          if (seen.every((port) => port === seen[0] && port !== from.port)) return nodeAt(seen[0]!);
          // An aborted failover (-failover-abort-no-good-slave) leaves everything as it was: ask again.
          const fields = (await admin.call(leader.port, 'SENTINEL', 'MASTER', name)) as string[];
          const flags = fields[fields.indexOf('flags') + 1] ?? '';
          if (seen[0] === from.port && !flags.includes('failover_in_progress')) await ask();
          return note(`Sentinels name masters ${seen.join(', ')}; leader's flags ${flags}`);
        },
        10,
      );
      const promotedMs = Date.now() - started;
      await until(
        `old master ${from.port} turning into a replica`,
        15_000,
        async (note) => {
          if (demotedMs !== undefined) return true;
          const role = infoField(await admin.text(from.port, 'INFO', 'replication'), 'role');
          if (role === 'slave') demotedMs = Date.now() - started;
          return note(`role ${role}`);
        },
        10,
      );
      await settle(`the group settling on ${to.port}`, 15_000, () => Promise.resolve(to));
      return { from, to, promotedMs, demotedMs, ms: Date.now() - started };
    },

    async failoverBeforeReplication(write) {
      const from = await group.master();
      const replicas = nodes.filter((node) => reachable(node) && node !== from);
      if (replicas.length === 0) throw new Error('no live replica to fail over to');
      for (const replica of replicas) replica.freeze();
      let resumed = false;
      const resume = (): void => {
        if (resumed) return;
        resumed = true;
        for (const replica of replicas) replica.resume();
      };
      try {
        await admin.call(from.port, 'CLIENT', 'KILL', 'TYPE', 'replica');
        await until(`master ${from.port} dropping its replicas`, 5_000, async (note) => {
          const connected = infoField(await admin.text(from.port, 'INFO', 'replication'), 'connected_slaves');
          return connected === '0' ? true : note(`connected_slaves:${connected}`);
        });
        await write(from);
      } catch (error) {
        resume();
        throw error;
      }
      const started = Date.now();
      await from.stop(true);
      admin.drop(from.port);
      resume();
      const to = await until(
        `Sentinels promoting a replica of killed master ${from.port}`,
        20_000,
        async (note) => {
          const seen = await mastersSeen();
          note(`Sentinels name masters ${seen.join(', ')}`);
          return seen.every((port) => port === seen[0] && port !== from.port) ? nodeAt(seen[0]!) : undefined;
        },
        10,
      );
      const promotedMs = Date.now() - started;
      await settle(`the group settling on ${to.port}`, 15_000, () => Promise.resolve(to));
      return { from, to, promotedMs, demotedMs: undefined, ms: Date.now() - started };
    },

    async settled(ms = 15_000) {
      await settle('the Sentinel group settling', ms, () => group.master());
    },
  };
  return group;
}

// ---------------------------------------------------------------------------------------------
// A standalone server that restarts empty on the same port
// ---------------------------------------------------------------------------------------------

/** A standalone redis-server that a test can kill and start again, empty, on the same port. */
export interface RestartableServer {
  readonly host: '127.0.0.1';
  /** Fixed for the server's whole life, so clients find it again after a restart. */
  readonly port: number;
  readonly url: string;
  /** The current process (a new one after each start). */
  readonly process: RedisProcess;
  readonly alive: boolean;
  /** A new ioredis client (errors swallowed, closed after the file); it reconnects by itself. */
  ioredis(options?: RedisOptions): Redis;
  /** A connected node-redis client (closed after the file); it reconnects by itself. */
  nodeRedis(options?: RedisClientOptions): Promise<NodeRedisClient>;
  /** SIGKILL: no shutdown, no save; clients see their connections drop. */
  kill(): Promise<void>;
  /** Starts a new, empty server on the same port (after kill()). */
  start(): Promise<void>;
  /** kill() then start(); resolves with how long the server was away (ms). */
  restart(): Promise<number>;
  /** SIGSTOP: the server stops answering but keeps its connections. */
  freeze(): void;
  /** SIGCONT after freeze(). */
  resume(): void;
}

/**
 * Starts the restartable server. `extraArgs` are passed to redis-server at every start. Every
 * start gets a new data directory (the old one goes with the killed process), so a restarted
 * server is always empty, whatever persistence `extraArgs` ask for.
 */
export async function startRestartableServer(extraArgs: readonly string[] = []): Promise<RestartableServer> {
  let current = await startRedisServer(extraArgs);
  const port = current.port;
  cleanups.push(() => current.stop(true));
  const server: RestartableServer = {
    host: '127.0.0.1',
    port,
    url: current.url,
    get process() {
      return current;
    },
    get alive() {
      return isAlive(current);
    },

    ioredis(options) {
      return trackIoredis(new Redis({ host: '127.0.0.1', port, ...options }));
    },

    async nodeRedis(options) {
      const client = createClient({
        ...options,
        socket: { host: '127.0.0.1', port, ...options?.socket },
      }) as unknown as NodeRedisClient;
      return connectNodeRedis(client);
    },

    kill: () => current.stop(true),

    async start() {
      if (isAlive(current)) throw new Error(`the server on port ${port} is still running`);
      // The port was just released: retry briefly in case the kernel has not let go of it yet.
      current = await until(
        `redis-server restarting on port ${port}`,
        5_000,
        () => startRedisServer(extraArgs, [], { port }),
        100,
      );
    },

    async restart() {
      const started = Date.now();
      await server.kill();
      await server.start();
      return Date.now() - started;
    },

    freeze: () => current.freeze(),
    resume: () => current.resume(),
  };
  return server;
}
