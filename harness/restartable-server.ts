/**
 * A standalone redis-server that a test can kill and start again, empty, on the same port, so
 * that its clients find it again: for tests of locks across a server restart. Stopped when the
 * test file ends.
 */
import { Redis, type RedisOptions } from 'ioredis';
import { createClient, type RedisClientOptions } from 'redis';
import { isAlive } from './admin.js';
import { atFileEnd } from './cleanup.js';
import { connectNodeRedis, trackIoredis, type NodeRedisClient } from './clients.js';
import { eventually } from './eventually.js';
import { startRedisServer, type RedisProcess } from './redis-process.js';

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
  atFileEnd(() => current.stop(true));
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
      current = await eventually(
        () => startRedisServer(extraArgs, [], { port }),
        5_000,
        `redis-server restarting on port ${port}`,
        { every: 100, retryErrors: true },
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
