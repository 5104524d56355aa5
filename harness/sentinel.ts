/**
 * Sentinel processes: one Sentinel from its config lines (the group in sentinel-group.ts starts
 * three), and the simplest Sentinel deployment, a primary watched by one Sentinel, for tests that
 * only need a client to find its master through a Sentinel.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { atFileEnd } from './cleanup.js';
import { startRedisServer, type RedisProcess } from './redis-process.js';

/** A directory for Sentinel config files, removed when the test file ends. */
export function sentinelConfigDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'latchkey-sentinels-'));
  atFileEnd(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Starts a Sentinel with `lines` as its config file `dir/file`; stopped when the test file ends. */
export async function startSentinelProcess(dir: string, file: string, lines: readonly string[]): Promise<RedisProcess> {
  const config = join(dir, file);
  writeFileSync(config, [...lines, ''].join('\n'));
  // redis-server <config> --sentinel: the config file comes first and must be writable.
  const sentinel = await startRedisServer([], [config, '--sentinel']);
  atFileEnd(() => sentinel.stop(true));
  return sentinel;
}

/** A primary watched by one real Sentinel process. */
export interface TestSentinel {
  readonly primary: RedisProcess;
  readonly sentinel: RedisProcess;
  readonly name: string;
  /** An ioredis client that finds the primary through the Sentinel (closed after the file). */
  client(): Redis;
}

export async function startSentinel(): Promise<TestSentinel> {
  const primary = await startRedisServer();
  atFileEnd(() => primary.stop(true));
  const name = 'latchkeyprimary';
  const sentinel = await startSentinelProcess(sentinelConfigDir(), 'sentinel.conf', [
    `sentinel monitor ${name} 127.0.0.1 ${primary.port} 1`,
    `sentinel down-after-milliseconds ${name} 5000`,
  ]);
  return {
    primary,
    sentinel,
    name,
    client() {
      const redis = new Redis({
        sentinels: [{ host: sentinel.host, port: sentinel.port }],
        name,
        failoverDetector: true,
      });
      redis.on('error', () => undefined);
      atFileEnd(() => redis.disconnect());
      return redis;
    },
  };
}
