/**
 * A master with 2 replicas watched by 3 Sentinels, for tests of locks through Sentinel failovers.
 * Every process is a private redis-server on a free loopback port, killed when the test file ends;
 * every wait is bounded and fails with what it last saw. Driven with raw admin commands, never
 * with latchkey. The failovers themselves are in sentinel-failovers.ts.
 */
import { Redis, type RedisOptions } from 'ioredis';
import { createSentinel, type RedisSentinelOptions } from 'redis';
import { Admin, behind, deploymentNode, infoField, reachable, type DeploymentNode } from './admin.js';
import { atFileEnd } from './cleanup.js';
import { connectNodeRedis, trackIoredis, type NodeRedisSentinel } from './clients.js';
import { eventually } from './eventually.js';
import { startRedisServer, type RedisProcess } from './redis-process.js';
import {
  failoverBeforeReplication,
  plannedFailover,
  type SentinelFailover,
  type SentinelView,
} from './sentinel-failovers.js';
import { sentinelConfigDir, startSentinelProcess } from './sentinel.js';

export type { SentinelFailover };

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
  for (const node of nodes) atFileEnd(() => node.stop(true));
  const [first] = nodes as [DeploymentNode, ...DeploymentNode[]];
  await Promise.all(nodes.slice(1).map((node) => admin.call(node.port, 'REPLICAOF', first.host, first.port)));
  // Replicas must be attached before the Sentinels start: a Sentinel learns replicas from the
  // master's INFO, which it sends at once, then only every info-period.
  await eventually(
    async (note) => {
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
    },
    10_000,
    'the replicas syncing with the master',
    { every: 50, retryErrors: true },
  );

  const dir = sentinelConfigDir();
  const sentinels = await Promise.all(
    [0, 1, 2].map(async (i) => {
      const sentinel = toNode(
        await startSentinelProcess(dir, `sentinel-${i}.conf`, [
          `sentinel monitor ${name} ${first.host} ${first.port} 2`,
          `sentinel down-after-milliseconds ${name} ${SENTINEL_DOWN_AFTER_MS}`,
          `sentinel failover-timeout ${name} ${SENTINEL_FAILOVER_TIMEOUT_MS}`,
        ]),
      );
      await admin.call(sentinel.port, 'SENTINEL', 'DEBUG', ...SENTINEL_DEBUG);
      return sentinel;
    }),
  );
  const byPort = new Map(nodes.map((node) => [node.port, node]));

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
    const seen = await view.mastersSeen();
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

  const view: SentinelView = {
    admin,
    name,
    nodes,
    sentinels,
    async master() {
      let lastError: unknown;
      for (const sentinel of sentinels.filter(reachable)) {
        try {
          const [, port] = (await admin.call(sentinel.port, 'SENTINEL', 'GET-MASTER-ADDR-BY-NAME', name)) as string[];
          return view.nodeAt(Number(port));
        } catch (error) {
          lastError = error;
        }
      }
      throw lastError instanceof Error ? lastError : new Error('no Sentinel answered');
    },
    mastersSeen: () =>
      Promise.all(
        sentinels.map(async (sentinel) => {
          const [, port] = (await admin.call(sentinel.port, 'SENTINEL', 'GET-MASTER-ADDR-BY-NAME', name)) as string[];
          return Number(port);
        }),
      ),
    nodeAt(port) {
      const node = byPort.get(port);
      if (!node) throw new Error(`no data node on port ${port}`);
      return node;
    },
    settle: (what, ms, master) =>
      eventually(
        async (note) => {
          const reason = await unsettled(await master());
          return reason ? note(reason) : (true as const);
        },
        ms,
        what,
        { every: 50, retryErrors: true },
      ),
  };

  await view.settle('the Sentinel group forming', 15_000, () => Promise.resolve(first));

  return {
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
    master: () => view.master(),
    async replicas() {
      const master = await view.master();
      const replicas: DeploymentNode[] = [];
      for (const node of nodes.filter((n) => reachable(n) && n !== master)) {
        const info = await admin.text(node.port, 'INFO', 'replication');
        if (Number(infoField(info, 'master_port')) === master.port) replicas.push(node);
      }
      return replicas;
    },
    plannedFailover: () => plannedFailover(view),
    failoverBeforeReplication: (write) => failoverBeforeReplication(view, write),
    async settled(ms = 15_000) {
      await view.settle('the Sentinel group settling', ms, () => view.master());
    },
  };
}
