/**
 * Starting private redis-server processes, each on its own free loopback port (never 6379): the
 * same code the CLI demo starts its private server with, which ships in src/cli. Tests, the bench
 * and the fault runner take it from here; no node:test import, so any of them may.
 */
export {
  findRedisServer,
  freePort,
  startRedisServer,
  type RedisProcess,
  type StartRedisServerOptions,
} from '../src/cli/redis-server.js';
