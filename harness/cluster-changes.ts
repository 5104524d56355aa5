/**
 * What the tests do to a replicated Cluster, as an operator would: a manual failover, a primary
 * killed, a slot migrated with its keys. Each resolves once every live node agrees on the result
 * and the cluster is ok again, and says how long that took.
 */
import { serves, slotOf, type ClusterNode, type ClusterView, type SlotOrKey } from './cluster-view.js';

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

export interface MigrateOptions {
  batch?: number;
  /** Awaited before each MIGRATE (`moved`: keys moved so far): holds the slot mid-migration. */
  beforeBatch?: (moved: number) => Promise<void>;
  /** Awaited once every key moved, before SETSLOT NODE: the keys are on the target, the slot still moving. */
  beforeSettle?: () => Promise<void>;
}

/** The slot's primary and its first live replica (the one to take over). */
async function primaryAndReplica(view: ClusterView, slot: number, to: string): Promise<[ClusterNode, ClusterNode]> {
  const from = view.nodeOf((await view.ownerLine(slot)).id);
  const [replica] = await view.replicaLinesOf(from);
  if (!replica) throw new Error(`primary ${from.port} of slot ${slot} has no live replica to ${to}`);
  return [from, view.nodeOf(replica.id)];
}

export async function manualFailover(view: ClusterView, slotOrKey: SlotOrKey): Promise<ClusterFailover> {
  const slot = slotOf(slotOrKey);
  const [from, to] = await primaryAndReplica(view, slot, 'fail over to');
  const started = Date.now();
  await view.admin.call(to.port, 'CLUSTER', 'FAILOVER');
  await view.settle(`manual failover of slot ${slot} from ${from.port} to ${to.port}`, 15_000, (lines) => {
    const owner = lines.find((line) => serves(line, slot));
    const old = lines.find((line) => line.id === from.id);
    if (owner?.id !== to.id) return `slot ${slot} still served by ${owner?.port}`;
    if (old?.masterId !== to.id) return `old primary ${from.port} not yet a replica of ${to.port}`;
    return undefined;
  });
  return { slot, from, to, ms: Date.now() - started };
}

export async function killPrimary(
  view: ClusterView,
  slotOrKey: SlotOrKey,
  { afterKill }: { afterKill?: () => void } = {},
): Promise<ClusterFailover> {
  const slot = slotOf(slotOrKey);
  const [from, to] = await primaryAndReplica(view, slot, 'take over');
  const started = Date.now();
  await from.stop(true);
  view.admin.drop(from.port);
  afterKill?.();
  await view.settle(`replica ${to.port} replacing killed primary ${from.port} (slot ${slot})`, 20_000, (lines) => {
    const owner = lines.find((line) => serves(line, slot));
    return owner?.id === to.id ? undefined : `slot ${slot} still served by ${owner?.port}`;
  });
  return { slot, from, to, ms: Date.now() - started };
}

export async function migrateSlot(
  view: ClusterView,
  slot: number,
  to: ClusterNode,
  { batch = 100, beforeBatch, beforeSettle }: MigrateOptions = {},
): Promise<SlotMigration> {
  const { admin } = view;
  const from = view.nodeOf((await view.ownerLine(slot)).id);
  const started = Date.now();
  if (from.id === to.id) return { slot, from, to, keys: 0, ms: 0 };
  const lines = await view.agreedLines();
  if (!lines.find((line) => line.id === to.id)?.flags.has('master') || !view.isLive(to.id)) {
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
    (line) => line.flags.has('master') && line.id !== to.id && line.id !== from.id && view.isLive(line.id),
  );
  await Promise.all(others.map((line) => admin.call(line.port, 'CLUSTER', 'SETSLOT', slot, 'NODE', to.id)));
  await view.settle(`slot ${slot} moving from ${from.port} to ${to.port}`, 10_000, (settled) => {
    const owner = settled.find((line) => serves(line, slot));
    return owner?.id === to.id ? undefined : `slot ${slot} still served by ${owner?.port}`;
  });
  return { slot, from, to, keys, ms: Date.now() - started };
}
