/**
 * How the nodes of a replicated Cluster see it: CLUSTER NODES parsed, the view every live node
 * shares (or why there is none yet), waiting for it to settle, who serves a slot, and names that
 * hash to a wanted slot. The replicated cluster and its failovers and migrations ask here.
 */
import { clusterSlot } from '../src/redis/cluster-slot.js';
import { behind, infoField, reachable, type Admin, type DeploymentNode } from './admin.js';
import { eventually } from './eventually.js';

/** A node of the replicated cluster. */
export interface ClusterNode extends DeploymentNode {
  /** Its cluster node ID (CLUSTER MYID), as CLUSTER NODES, SETSLOT and REPLICATE use it. */
  readonly id: string;
}

/** A slot, or a key (or lock name) whose hash slot is meant: `k{tag}x` hashes as `tag`. */
export type SlotOrKey = number | string;

export const slotOf = (slotOrKey: SlotOrKey): number =>
  typeof slotOrKey === 'number' ? slotOrKey : clusterSlot(slotOrKey);

/** One line of CLUSTER NODES, as one node sees one node. */
export interface NodeLine {
  readonly id: string;
  readonly port: number;
  readonly flags: ReadonlySet<string>;
  readonly masterId: string | undefined;
  readonly epoch: number;
  readonly ranges: readonly (readonly [number, number])[];
  /** Slots in MIGRATING or IMPORTING state (listed on the node's own line only). */
  readonly moving: readonly string[];
}

export function parseClusterNodes(text: string): NodeLine[] {
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

export const serves = (line: NodeLine, slot: number): boolean =>
  line.flags.has('master') && line.ranges.some(([from, to]) => slot >= from && slot <= to);

let nameCounter = 0;

/** A fresh name whose slot passes `wanted` (names never repeat within a test file). */
export function findName(prefix: string, wanted: (slot: number) => boolean): string {
  for (let tries = 0; tries < 1_000_000; tries++) {
    const name = `${prefix}:${nameCounter++}`;
    if (wanted(clusterSlot(name))) return name;
  }
  throw new Error(`no name with prefix ${prefix} hashes to a wanted slot`);
}

/** What the live nodes of a cluster agree on, asked afresh at every call (roles and slots move). */
export class ClusterView {
  readonly #byId: Map<string, ClusterNode>;

  constructor(
    readonly admin: Admin,
    readonly nodes: readonly ClusterNode[],
  ) {
    this.#byId = new Map(nodes.map((node) => [node.id, node]));
  }

  /** The nodes the harness may query now (alive, not frozen). */
  live(): ClusterNode[] {
    return this.nodes.filter(reachable);
  }

  isLive(id: string): boolean {
    return reachable(this.nodeOf(id));
  }

  nodeOf(id: string): ClusterNode {
    const node = this.#byId.get(id);
    if (!node) throw new Error(`unknown cluster node ${id}`);
    return node;
  }

  /**
   * The view every live node shares of the cluster, or why there is none yet. `strict` (for
   * settling) also wants cluster_state:ok everywhere, fail flags on exactly the unreachable nodes,
   * and no slot in migration.
   */
  async views(strict: boolean): Promise<{ lines: NodeLine[] } | { disagreement: string }> {
    const { admin } = this;
    const alive = this.live();
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
          if (!this.isLive(line.id)) return `${line.port}:${strict ? failed : 'unreachable'}`;
          const role = line.flags.has('master') ? 'master' : `replica-of-${this.#byId.get(line.masterId ?? '')?.port}`;
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
    const failing = lines.filter(
      (line) => this.isLive(line.id) === (line.flags.has('fail') || line.flags.has('pfail')),
    );
    if (failing.length > 0) return { disagreement: `fail flags do not match liveness: [${signatures[0]}]` };
    const moving = parsed.flat().filter((line) => line.moving.length > 0);
    if (moving.length > 0) return { disagreement: `slots still moving: ${moving.flatMap((l) => l.moving).join(' ')}` };
    return { lines };
  }

  /** Waits for agreement plus replicas in sync (and what `expect` wants), and returns the agreed view. */
  settle(what: string, ms: number, expect?: (lines: NodeLine[]) => string | undefined): Promise<NodeLine[]> {
    return eventually(
      async (note) => {
        const view = await this.views(true);
        if ('disagreement' in view) return note(view.disagreement);
        const unmet = expect?.(view.lines);
        if (unmet) return note(unmet);
        const replicas = view.lines.filter((line) => line.flags.has('slave') && this.isLive(line.id));
        for (const line of replicas) {
          const info = await this.admin.text(line.port, 'INFO', 'replication');
          if (infoField(info, 'master_link_status') !== 'up') return note(`replica ${line.port} not in sync yet`);
          const master = view.lines.find((other) => other.id === line.masterId);
          const lagging = master && (await behind(this.admin, master.port, [line.port]));
          if (lagging) return note(lagging);
        }
        return view.lines;
      },
      ms,
      what,
      { every: 50, retryErrors: true },
    );
  }

  /** The topology every live node agrees on (slots may be moving, nodes failing). */
  agreedLines(): Promise<NodeLine[]> {
    return eventually(
      async (note) => {
        const view = await this.views(false);
        return 'disagreement' in view ? note(view.disagreement) : view.lines;
      },
      10_000,
      'the cluster nodes agreeing on the topology',
      { every: 50, retryErrors: true },
    );
  }

  /** The slot's owner per the highest config epoch among the claims live nodes know of. */
  async ownerLine(slot: number): Promise<NodeLine> {
    const tables = await Promise.allSettled(this.live().map((node) => this.admin.text(node.port, 'CLUSTER', 'NODES')));
    const answered = tables.flatMap((table) => (table.status === 'fulfilled' ? [table.value] : []));
    let best: NodeLine | undefined;
    for (const line of answered.flatMap(parseClusterNodes)) {
      if (serves(line, slot) && !line.flags.has('fail') && (!best || line.epoch > best.epoch)) best = line;
    }
    if (!best) throw new Error(`no live node serves slot ${slot}`);
    return best;
  }

  /** The live replicas of `primary`, as the nodes agree. */
  async replicaLinesOf(primary: ClusterNode): Promise<NodeLine[]> {
    const lines = await this.agreedLines();
    return lines.filter((line) => line.masterId === primary.id && line.flags.has('slave') && this.isLive(line.id));
  }
}
