/**
 * How a client learns that a hold was lost before renewal would tell it: the one interface the
 * client and KeyLock see, and the one place a detector is built. See docs/loss-detection.md.
 */
import type { Liveness } from '../engine/liveness.js';
import type { Warn } from '../engine/server-checks.js';
import type { RenewBatch } from '../engine/watchdog.js';
import type { LuaScript, RedisConnection } from '../redis/connection.js';
import type { ScriptRunner } from '../redis/script-runner.js';
import { PushDetector } from './push-detector.js';

/** What a hold is checked with: a read-only batch script answering 1 per key still held by its owner. */
export interface LossCheck {
  readonly script: LuaScript;
  readonly key: string;
  readonly owner: string;
}

/** Finds lost holds between renewals, and sends the renewals (where they go matters to it). */
export interface LossDetector {
  /** Watches a hold until the returned function is called (before its final release is sent). */
  watch(liveness: Liveness, check: LossCheck): () => void;
  /** Sends one renewal batch for the watchdog. */
  readonly renew: RenewBatch;
  /** Stops watching and closes what the detector opened (client shutdown). */
  close(): void;
}

export interface LossDetectorOptions {
  /** `'push'`: Redis key tracking tells at once; `'renewal'`: only renewal finds losses. */
  readonly mode: 'push' | 'renewal';
  readonly connection: RedisConnection;
  /** The client's own script runner (renewals, and checks while tracking is down). */
  readonly run: ScriptRunner;
  readonly commandTimeout: number;
  /** Says once when push detection cannot be had, and why. */
  readonly warn: Warn;
}

const unwatched = (): void => undefined;

/** A detector that only renews: a loss is found by the next renewal. */
function renewalOnly(run: ScriptRunner): LossDetector {
  return {
    watch: () => unwatched,
    renew: (script, keys, args, deadline) => run(script, keys.slice(0, 1), args, deadline),
    close: () => undefined,
  };
}

/** The client's loss detector, as its options ask for. */
export function createLossDetector(options: LossDetectorOptions): LossDetector {
  if (options.mode === 'renewal') return renewalOnly(options.run);
  return new PushDetector(options, renewalOnly(options.run));
}
