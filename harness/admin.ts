/**
 * The deployments' own view of their servers: one admin connection per port (short timeouts, so a
 * dead or frozen server fails a probe instead of hanging it), INFO fields, replication lag, and
 * the node wrapper that knows whether a process is alive or frozen. Nothing here uses latchkey.
 */
import { Redis } from 'ioredis';
import { atFileEnd } from './cleanup.js';
import type { RedisProcess } from './redis-process.js';

/** The process has not exited. */
export const isAlive = (process: RedisProcess): boolean =>
  process.child.exitCode === null && process.child.signalCode === null;

/** A field of an INFO reply (`undefined` when absent). */
export function infoField(info: string, field: string): string | undefined {
  return new RegExp(`^${field}:(.*)$`, 'm').exec(info)?.[1]?.trim();
}

/**
 * One admin connection per server port, for the harness's own commands. Short timeouts: a dead or
 * frozen server must make a probe fail (and be retried), never hang it.
 */
export class Admin {
  private readonly connections = new Map<number, Redis>();

  constructor() {
    atFileEnd(() => this.closeAll());
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
      redis.on('error', () => undefined);
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
export async function behind(admin: Admin, master: number, replicas: readonly number[]): Promise<string | undefined> {
  const wrote = Number(infoField(await admin.text(master, 'INFO', 'replication'), 'master_repl_offset'));
  for (const port of replicas) {
    const got = Number(infoField(await admin.text(port, 'INFO', 'replication'), 'slave_repl_offset'));
    if (!(got >= wrote)) return `replica ${port} at offset ${got} of ${master}'s ${wrote}`;
  }
  return undefined;
}

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
export function deploymentNode<T extends object>(process: RedisProcess, extra: T): DeploymentNode & T {
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
export const reachable = (node: DeploymentNode): boolean => node.alive && !node.frozen;
