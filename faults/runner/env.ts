/**
 * The Redis side of a scenario: private servers and the per-worker TCP proxies.
 */
import { Redis } from 'ioredis';
import { startRedisServer, type RedisProcess } from '../../harness/redis-process.js';
import { LockClient } from '../../src/index.js';
import { TcpProxy } from '../../harness/tcp-proxy.js';
import { onCleanup } from './cleanup.js';

/** One Redis server of a scenario, with the runner's own connections to it. */
export interface Server {
  readonly index: number;
  readonly process: RedisProcess;
  /** The runner's admin connection (faults, end-state checks); never proxied. */
  readonly admin: Redis;
  /** A LockClient on `admin`, for end-state checks through the public API. */
  readonly locks: LockClient;
  /** Killed by a fault: no longer checked. */
  dead: boolean;
}

/**
 * The Redis side of one scenario: private redis-servers on free loopback ports (never the one on
 * 6379), and optionally one TCP proxy per worker and server, so a fault can hit one worker's
 * connections only. Everything is stopped by `stop()`, or by the cleanup on Ctrl-C.
 */
export class Env {
  readonly #stop: () => Promise<void>;

  private constructor(
    readonly servers: readonly Server[],
    /** proxies[worker][server], when the scenario asked for proxies. */
    readonly proxies: readonly (readonly TcpProxy[])[],
    stop: () => Promise<void>,
  ) {
    this.#stop = stop;
  }

  static async start(servers: number, workers: number, proxied: boolean): Promise<Env> {
    const started: Server[] = [];
    const proxies: TcpProxy[][] = [];
    const stop = onCleanup(async () => {
      for (const row of proxies) for (const proxy of row) await proxy.close().catch(() => undefined);
      for (const server of started) {
        await server.locks.shutdown().catch(() => undefined);
        server.admin.disconnect();
        await server.process.stop(true);
      }
    });
    const env = new Env(started, proxies, stop);
    try {
      const processes = await Promise.all(Array.from({ length: servers }, () => startRedisServer()));
      for (const [index, process] of processes.entries()) {
        const admin = new Redis({ host: process.host, port: process.port, lazyConnect: false });
        admin.on('error', () => undefined);
        started.push({ index, process, admin, locks: new LockClient(admin), dead: false });
      }
      for (let w = 0; proxied && w < workers; w++) {
        proxies.push(await Promise.all(processes.map((p) => TcpProxy.start({ host: p.host, port: p.port }))));
      }
    } catch (error) {
      await stop();
      throw error;
    }
    return env;
  }

  /** What worker `w` connects to: through its proxy when there is one. */
  serversFor(w: number): { url: string; direct: string }[] {
    return this.servers.map((server) => ({
      url: this.proxies[w]?.[server.index]?.url ?? server.process.url,
      direct: server.process.url,
    }));
  }

  proxy(worker: number, server = 0): TcpProxy {
    const proxy = this.proxies[worker]?.[server];
    if (!proxy) throw new Error(`scenario has no proxy for worker ${worker}`);
    return proxy;
  }

  get live(): Server[] {
    return this.servers.filter((server) => !server.dead);
  }

  /** Undoes every fault that can be undone (frozen servers, stalled or delayed proxies). */
  heal(): void {
    for (const server of this.live) server.process.resume();
    for (const row of this.proxies) {
      for (const proxy of row) {
        proxy.resume();
        proxy.delay('both', 0);
      }
    }
  }

  stop(): Promise<void> {
    return this.#stop();
  }
}
