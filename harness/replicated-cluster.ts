/**
 * A real local Redis Cluster of 3 primaries with 1 replica each, for tests of locks through
 * failover and slot migration. Every process is a private redis-server on a free loopback port,
 * killed by PID when the test file ends, its clients closed first. Every wait is bounded and fails
 * with what it last saw. Nothing here uses latchkey itself: the cluster is driven with raw admin
 * commands over ioredis.
 */
import { Cluster, type ClusterOptions } from 'ioredis';
import { createCluster, type RedisClusterOptions } from 'redis';
import { Admin, deploymentNode } from './admin.js';
import { atFileEnd } from './cleanup.js';
import { connectNodeRedis, trackIoredis, type NodeRedisCluster } from './clients.js';
import {
  killPrimary,
  manualFailover,
  migrateSlot,
  type ClusterFailover,
  type MigrateOptions,
  type SlotMigration,
} from './cluster-changes.js';
import { ClusterView, findName, slotOf, type ClusterNode, type SlotOrKey } from './cluster-view.js';
import { clusterNodeArgs, startFormedCluster } from './form-cluster.js';

export type { ClusterFailover, ClusterNode, SlotMigration, SlotOrKey };

/**
 * A Redis Cluster of 3 primaries with 1 replica each, slots split as redis-cli splits them (0-5460, 5461-10922,
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
  migrateSlot(slot: number, to: ClusterNode, options?: MigrateOptions): Promise<SlotMigration>;
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
  ...clusterNodeArgs(1_000),
  '--cluster-replica-validity-factor',
  '0',
  '--cluster-allow-replica-migration',
  'no',
  '--repl-diskless-sync-delay',
  '0',
];

/**
 * Starts the 3 × (primary + replica) cluster and waits until it is fully formed: every node says
 * cluster_state:ok and agrees on the topology, every replica is in sync. ~2.5 s: a cluster
 * primary refuses to say ok in its first 2 s (CLUSTER_WRITABLE_DELAY).
 */
export async function startReplicatedCluster(): Promise<ReplicatedCluster> {
  const processes = await startFormedCluster(3, { replicasEach: 1, args: CLUSTER_ARGS });
  for (const process of processes) atFileEnd(() => process.stop(true));
  const admin = new Admin();
  const ids = await Promise.all(processes.map((process) => admin.text(process.port, 'CLUSTER', 'MYID')));
  const nodes: ClusterNode[] = processes.map((process, i) => deploymentNode(process, { id: ids[i]! }));
  const view = new ClusterView(admin, nodes);
  await view.settle('the replicated cluster forming', 15_000, (lines) => {
    const replicas = lines.filter((line) => line.flags.has('slave')).length;
    return replicas === 3 ? undefined : `${replicas} of 3 replicas attached`;
  });

  const cluster: ReplicatedCluster = {
    nodes,

    ioredis(options) {
      return trackIoredis(
        new Cluster(
          view.live().map(({ host, port }) => ({ host, port })),
          options,
        ),
      );
    },

    async nodeRedis(options) {
      const client = createCluster({
        rootNodes: view.live().map(({ url }) => ({ url })),
        ...options,
      }) as unknown as NodeRedisCluster;
      return connectNodeRedis(client);
    },

    async primaryOf(slotOrKey) {
      return view.nodeOf((await view.ownerLine(slotOf(slotOrKey))).id);
    },

    async primaries() {
      const lines = await view.agreedLines();
      return lines
        .filter((line) => line.flags.has('master') && line.ranges.length > 0 && view.isLive(line.id))
        .sort((a, b) => a.ranges[0]![0] - b.ranges[0]![0])
        .map((line) => view.nodeOf(line.id));
    },

    async replicasOf(primary) {
      return (await view.replicaLinesOf(primary)).map((line) => view.nodeOf(line.id));
    },

    async slotsOf(primary) {
      const line = (await view.agreedLines()).find((l) => l.id === primary.id);
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

    nameInSlot: (slot, prefix = 'key') => findName(prefix, (s) => s === slot),
    manualFailover: (slotOrKey) => manualFailover(view, slotOrKey),
    killPrimary: (slotOrKey, options) => killPrimary(view, slotOrKey, options),
    migrateSlot: (slot, to, options) => migrateSlot(view, slot, to, options),

    async settled(ms = 15_000) {
      await view.settle('the cluster settling', ms);
    },
  };
  return cluster;
}
