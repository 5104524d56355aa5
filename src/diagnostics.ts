import * as diagnosticsChannel from 'node:diagnostics_channel';
import { debuglog } from 'node:util';

/**
 * Every diagnostics channel latchkey publishes on, named `latchkey:<area>:<event>`. Subscribe with
 * `diagnostics_channel.subscribe(name, fn)`; messages are published only while someone listens.
 */
export const channels = Object.freeze({
  acquire: diagnosticsChannel.channel('latchkey:lock:acquire'),
  release: diagnosticsChannel.channel('latchkey:lock:release'),
  renew: diagnosticsChannel.channel('latchkey:lock:renew'),
  lost: diagnosticsChannel.channel('latchkey:lock:lost'),
  wait: diagnosticsChannel.channel('latchkey:lock:wait'),
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
