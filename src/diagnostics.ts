import diagnosticsChannel from 'node:diagnostics_channel';
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

/** Publishes `message` on a channel, building it only when someone subscribes. */
export function publish(name: ChannelName, message: () => object): void {
  const channel = channels[name];
  if (channel.hasSubscribers) channel.publish(message());
}

// NODE_DEBUG=latchkey is just another subscriber.
const debug = debuglog('latchkey');
if (debug.enabled) {
  for (const [name, channel] of Object.entries(channels)) {
    channel.subscribe((message) => debug('%s %o', name, message));
  }
}
