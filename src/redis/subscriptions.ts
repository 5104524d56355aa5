/**
 * Reference-counted channel listeners over one subscriber connection: the first listener of a
 * channel subscribes, the last one to leave unsubscribes. Shared by the adapters.
 */
export class Subscriptions {
  readonly #listeners = new Map<string, Set<(message: string) => void>>();
  readonly #pending = new Map<string, Promise<void>>();

  constructor(
    private readonly subscribeChannel: (channel: string) => Promise<void>,
    private readonly unsubscribeChannel: (channel: string) => Promise<void>,
  ) {}

  /** Delivers a message received on `channel` to its listeners. */
  dispatch(channel: string, message: string): void {
    const listeners = this.#listeners.get(channel);
    if (listeners) for (const listener of [...listeners]) listener(message);
  }

  async add(channel: string, listener: (message: string) => void): Promise<() => Promise<void>> {
    let listeners = this.#listeners.get(channel);
    if (!listeners) {
      listeners = new Set();
      this.#listeners.set(channel, listeners);
      const subscribing = this.subscribeChannel(channel);
      this.#pending.set(channel, subscribing);
      subscribing.then(
        () => this.#pending.delete(channel),
        () => this.#pending.delete(channel),
      );
    }
    listeners.add(listener);
    try {
      await this.#pending.get(channel);
    } catch (error) {
      listeners.delete(listener);
      if (listeners.size === 0 && this.#listeners.get(channel) === listeners) this.#listeners.delete(channel);
      throw error;
    }
    let removed = false;
    return () => {
      if (removed) return Promise.resolve();
      removed = true;
      listeners.delete(listener);
      if (listeners.size === 0 && this.#listeners.get(channel) === listeners) {
        this.#listeners.delete(channel);
        // Not awaited: a caller leaving a wait must not hang on a frozen server. A later SUBSCRIBE
        // of the same channel goes out after this UNSUBSCRIBE on the same connection, so order holds.
        this.unsubscribeChannel(channel).catch(() => undefined);
      }
      return Promise.resolve();
    };
  }

  get size(): number {
    return this.#listeners.size;
  }
}
