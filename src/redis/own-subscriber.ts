/**
 * Channel listeners over a sharded subscriber of latchkey's own, for the adapters whose client
 * cannot be handed one by duplicate() (GLIDE, Bun): opened at the first subscription, opened again
 * at the next one after it could not connect, closed with the adapter.
 */
import type { ChannelListener } from './connection.js';
import type { ShardedSubscriber } from './node-redis-shape.js';
import { subscribeClassified } from './script-sender.js';
import { Subscriptions } from './subscriptions.js';

export class OwnSubscriber {
  #subscriber: ShardedSubscriber | undefined;
  readonly #subscriptions: Subscriptions;

  /** `open(reconnected)` starts connecting a subscriber; it calls `reconnected` whenever messages may have been lost. */
  constructor(private readonly open: (reconnected: () => void) => ShardedSubscriber) {
    this.#subscriptions = new Subscriptions(
      async (channel) => {
        const subscriber = await this.#connected();
        await subscriber.sSubscribe(channel, (message) => this.#subscriptions.dispatch(channel, message));
      },
      async (channel) => {
        await this.#subscriber?.sUnsubscribe(channel);
      },
    );
  }

  subscribe(channel: string, listener: ChannelListener): Promise<() => Promise<void>> {
    return subscribeClassified(this.#subscriptions, channel, listener);
  }

  async close(): Promise<void> {
    const subscriber = this.#subscriber;
    this.#subscriber = undefined;
    await subscriber?.close();
  }

  async #connected(): Promise<ShardedSubscriber> {
    const subscriber = (this.#subscriber ??= this.open(() => void this.#subscriptions.reconnected(false)));
    try {
      await subscriber.ready;
    } catch (error) {
      if (this.#subscriber === subscriber) this.#subscriber = undefined;
      await subscriber.close();
      throw error;
    }
    return subscriber;
  }
}
