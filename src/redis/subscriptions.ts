/**
 * Reference-counted channel listeners over one subscriber connection, shared by the adapters.
 */
import type { ChannelListener } from './connection.js';

/**
 * Reference-counted channel listeners over one subscriber connection: the first listener of a
 * channel subscribes, the last one to leave unsubscribes. Shared by the adapters.
 */
export class Subscriptions {
  /** Replaced, never changed in place, so that a dispatch runs over the listeners of its moment without copying them. */
  readonly #listeners = new Map<string, readonly ChannelListener[]>();
  readonly #pending = new Map<string, Promise<void>>();

  constructor(
    private readonly subscribeChannel: (channel: string) => Promise<void>,
    private readonly unsubscribeChannel: (channel: string) => Promise<void>,
  ) {}

  /** Delivers a message received on `channel` to its listeners (a hand-over: on its way to a waiter). */
  dispatch(channel: string, message: string): void {
    const listeners = this.#listeners.get(channel);
    if (listeners === undefined) return;
    for (const listener of listeners) listener.message(message);
  }

  /**
   * The subscriber connection came back: subscribe every channel again when the adapter must do
   * it itself (`resubscribe`), then tell every listener that messages may have been lost.
   */
  async reconnected(resubscribe: boolean): Promise<void> {
    const channels = [...this.#listeners.keys()];
    if (resubscribe)
      await Promise.all(channels.map((channel) => this.subscribeChannel(channel).catch(() => undefined)));
    for (const channel of channels) for (const listener of this.#listeners.get(channel) ?? []) listener.reconnected();
  }

  async add(channel: string, listener: ChannelListener): Promise<() => Promise<void>> {
    const existing = this.#listeners.get(channel);
    this.#listeners.set(channel, existing ? [...existing, listener] : [listener]);
    if (!existing) {
      const subscribing = this.subscribeChannel(channel);
      this.#pending.set(channel, subscribing);
      const settled = (): void => {
        if (this.#pending.get(channel) === subscribing) this.#pending.delete(channel);
      };
      subscribing.then(settled, settled);
    }
    try {
      await this.#pending.get(channel);
    } catch (error) {
      this.#remove(channel, listener);
      throw error;
    }
    let removed = false;
    return () => {
      if (removed) return Promise.resolve();
      removed = true;
      if (this.#remove(channel, listener)) {
        // Not awaited: a caller leaving a wait must not hang on a frozen server. A later SUBSCRIBE
        // of the same channel goes out after this UNSUBSCRIBE on the same connection, so order holds.
        this.unsubscribeChannel(channel).catch(() => undefined);
      }
      return Promise.resolve();
    };
  }

  /** Takes `listener` off `channel`; true when that left the channel without listeners. */
  #remove(channel: string, listener: ChannelListener): boolean {
    const listeners = this.#listeners.get(channel);
    if (!listeners?.includes(listener)) return false;
    const left = listeners.filter((other) => other !== listener);
    if (left.length > 0) {
      this.#listeners.set(channel, left);
      return false;
    }
    this.#listeners.delete(channel);
    return true;
  }

  get size(): number {
    return this.#listeners.size;
  }
}
