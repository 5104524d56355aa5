/**
 * Checks each Redis server a client writes to, once, for settings that weaken what a lock
 * promises, and warns about them: a server that may evict keys with a TTL deletes held locks
 * under memory pressure, and nobody released them.
 */
import type { LuaScript } from '../redis/connection.js';
import type { ScriptRunner } from '../redis/script-runner.js';
import { serverEvictionPolicy } from '../scripts/index.js';

/** Warns once per code (see `LatchkeyWarning`). */
export type Warn = (code: string, message: string) => void;

export class ServerChecks {
  /** Groups (servers, Cluster primaries) checked or being checked. */
  readonly #checked = new Set<string>();

  constructor(
    private readonly run: ScriptRunner,
    private readonly batchGroup: (key: string) => string,
    private readonly warn: Warn,
    private readonly script: LuaScript = serverEvictionPolicy,
  ) {}

  /** Checks the server that serves `key`, the first time; never delays or fails the caller. */
  check(key: string): void {
    const group = this.batchGroup(key);
    if (this.#checked.has(group)) return;
    this.#checked.add(group);
    this.run(this.script, [key], []).then(
      (policy) => {
        if (typeof policy === 'string' && policy !== 'noeviction')
          this.warn('EVICTION_POLICY', evictionMessage(policy));
      },
      // Not known: asked again at the next acquisition.
      () => this.#checked.delete(group),
    );
  }
}

function evictionMessage(policy: string): string {
  return (
    `Redis runs with maxmemory-policy ${policy}: under memory pressure it may evict keys with a TTL, ` +
    'held locks and semaphore permits included, and another client then takes a lock that was never ' +
    'released (its holder hears of it as a lost lock). Set maxmemory-policy noeviction on servers that keep locks.'
  );
}
