/**
 * The Sentinel group's failovers: a planned one (SENTINEL FAILOVER) and the write-lost one, a
 * master killed before it replicated a write. Each resolves once every Sentinel names the new
 * master and the group settled, and says how long each step took.
 */
import { infoField, reachable, type Admin, type DeploymentNode } from './admin.js';
import { eventually } from './eventually.js';

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

/** What the failovers ask of the group: its admin connections and views. */
export interface SentinelView {
  readonly admin: Admin;
  readonly name: string;
  readonly nodes: readonly DeploymentNode[];
  readonly sentinels: readonly DeploymentNode[];
  /** The master now, per the first Sentinel that answers. */
  master(): Promise<DeploymentNode>;
  /** Every Sentinel's master address, as ports (throws if one does not answer). */
  mastersSeen(): Promise<number[]>;
  nodeAt(port: number): DeploymentNode;
  /** Waits until the group settled on the node `master()` names. */
  settle(what: string, ms: number, master: () => Promise<DeploymentNode>): Promise<true>;
}

const POLL = { every: 10, retryErrors: true };

export async function plannedFailover(group: SentinelView): Promise<SentinelFailover> {
  const { admin, name } = group;
  const from = await group.master();
  const leader = group.sentinels[0]!;
  const roleOfOld = async (): Promise<string | undefined> =>
    infoField(await admin.text(from.port, 'INFO', 'replication'), 'role');
  // Retried while refused (-NOGOODSLAVE: no replica passed the freshness checks just now).
  const ask = (): Promise<true> =>
    eventually(
      async () => {
        await admin.call(leader.port, 'SENTINEL', 'FAILOVER', name);
        return true as const;
      },
      5_000,
      `Sentinel ${leader.port} accepting FAILOVER`,
      { every: 50, retryErrors: true },
    );
  const started = Date.now();
  await ask();
  let demotedMs: number | undefined;
  const to = await eventually(
    async (note) => {
      if (demotedMs === undefined && (await roleOfOld()) === 'slave') demotedMs = Date.now() - started;
      const seen = await group.mastersSeen();
      if (seen.every((port) => port === seen[0] && port !== from.port)) return group.nodeAt(seen[0]!);
      // An aborted failover (-failover-abort-no-good-slave) leaves everything as it was: ask again.
      const fields = (await admin.call(leader.port, 'SENTINEL', 'MASTER', name)) as string[];
      const flags = fields[fields.indexOf('flags') + 1] ?? '';
      if (seen[0] === from.port && !flags.includes('failover_in_progress')) await ask();
      return note(`Sentinels name masters ${seen.join(', ')}; leader's flags ${flags}`);
    },
    15_000,
    `Sentinels promoting a replica of ${from.port}`,
    POLL,
  );
  const promotedMs = Date.now() - started;
  await eventually(
    async (note) => {
      if (demotedMs !== undefined) return true;
      const role = await roleOfOld();
      if (role === 'slave') demotedMs = Date.now() - started;
      return note(`role ${role}`);
    },
    15_000,
    `old master ${from.port} turning into a replica`,
    POLL,
  );
  await group.settle(`the group settling on ${to.port}`, 15_000, () => Promise.resolve(to));
  return { from, to, promotedMs, demotedMs, ms: Date.now() - started };
}

export async function failoverBeforeReplication(
  group: SentinelView,
  write: (master: DeploymentNode) => Promise<void>,
): Promise<SentinelFailover> {
  const { admin } = group;
  const from = await group.master();
  const replicas = group.nodes.filter((node) => reachable(node) && node !== from);
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
    await eventually(
      async (note) => {
        const connected = infoField(await admin.text(from.port, 'INFO', 'replication'), 'connected_slaves');
        return connected === '0' || note(`connected_slaves:${connected}`);
      },
      5_000,
      `master ${from.port} dropping its replicas`,
      { every: 50, retryErrors: true },
    );
    await write(from);
  } catch (error) {
    resume();
    throw error;
  }
  const started = Date.now();
  await from.stop(true);
  admin.drop(from.port);
  resume();
  const to = await eventually(
    async (note) => {
      const seen = await group.mastersSeen();
      note(`Sentinels name masters ${seen.join(', ')}`);
      return seen.every((port) => port === seen[0] && port !== from.port) ? group.nodeAt(seen[0]!) : undefined;
    },
    20_000,
    `Sentinels promoting a replica of killed master ${from.port}`,
    POLL,
  );
  const promotedMs = Date.now() - started;
  await group.settle(`the group settling on ${to.port}`, 15_000, () => Promise.resolve(to));
  return { from, to, promotedMs, demotedMs: undefined, ms: Date.now() - started };
}
