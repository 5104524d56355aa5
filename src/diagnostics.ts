/**
 * The diagnostics channels latchkey publishes on (acquire, release, renew, lost, wait, warning),
 * the shape of a warning, and the kinds of primitive the messages name.
 */
import * as diagnosticsChannel from 'node:diagnostics_channel';
import { debuglog } from 'node:util';

/**
 * Every diagnostics channel latchkey publishes on, named `latchkey:<area>:<event>`. Subscribe with
 * `diagnostics_channel.subscribe(name, fn)`; messages are published only while someone listens.
 */
export const channels = Object.freeze({
  /**
   * A hold was taken: `{ name, kind, key, owner, holds, waited, byMessage? }` (`waited` in ms;
   * `byMessage`: a lock handed over and proven by its message, with no round trip).
   */
  acquire: diagnosticsChannel.channel('latchkey:lock:acquire'),
  /** A hold was given back: `{ name, kind, key, owner, holds, held? }` (`held`: ms, once no hold is left). */
  release: diagnosticsChannel.channel('latchkey:lock:release'),
  /** A renewal confirmed a hold: `{ name, kind, key, owner }`. */
  renew: diagnosticsChannel.channel('latchkey:lock:renew'),
  /** A hold was lost: `{ name, kind, key, owner, reason }`. */
  lost: diagnosticsChannel.channel('latchkey:lock:lost'),
  /**
   * A wait started, `{ name, kind, phase: 'start' }`, or ended, `{ name, kind, phase: 'end',
   * acquired, waited, outcome }` (`outcome`: 'acquired', 'timeout', 'aborted' or 'error').
   */
  wait: diagnosticsChannel.channel('latchkey:lock:wait'),
  /**
   * Something about the server or the client weakens a guarantee or turns a feature off:
   * `{ code, message }` (see {@link LatchkeyWarning}). Published once per code and client.
   */
  warning: diagnosticsChannel.channel('latchkey:client:warning'),
});

export type ChannelName = keyof typeof channels;

/**
 * The channel while someone listens, else undefined: `listening('acquire')?.publish({ ... })`
 * builds its message only then, and costs nothing else (not even a closure) on every lock().
 */
export function listening(name: ChannelName): diagnosticsChannel.Channel | undefined {
  const channel = channels[name];
  return channel.hasSubscribers ? channel : undefined;
}

// NODE_DEBUG=latchkey is just another subscriber.
const debug = debuglog('latchkey');
if (debug.enabled) {
  for (const [name, channel] of Object.entries(channels)) {
    channel.subscribe((message) => debug('%s %o', name, message));
  }
}

/**
 * What a `warning` says: a stable `code` and a message naming the cause and the fix.
 * - `EVICTION_POLICY`: the server may evict keys that have a TTL, locks included.
 * - `TRACKING_UNAVAILABLE`: loss detection by push is off where it was expected (the server refuses
 *   a command key tracking needs, or the client could not make a connection for it); losses are
 *   found by renewal. Told at the first hold; `lossDetection: 'renewal'` silences it. A deployment
 *   that offers no tracking (a Cluster, node-redis Sentinel) finds losses by renewal as documented,
 *   without a warning.
 * - `REPLICA_ACKS_UNAVAILABLE`: the server refuses `WAIT`, which `replicaAcks` needs: every
 *   acquisition then rejects with `CommandRefusedError`.
 */
export interface LatchkeyWarning {
  /** Stable machine-readable code, e.g. `EVICTION_POLICY`. */
  readonly code: string;
  /** What is weakened, why, and the fix. */
  readonly message: string;
}

/** The kind of primitive a diagnostics message is about. */
export type LockKind =
  | 'lock'
  | 'fair-lock'
  | 'spin-lock'
  | 'fenced-lock'
  | 'read-lock'
  | 'write-lock'
  | 'multi-lock'
  | 'red-lock'
  | 'semaphore'
  | 'permit-expirable-semaphore'
  | 'count-down-latch';
