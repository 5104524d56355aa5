/** How long a channel stays subscribed after its last listener left. */
const LINGER_MS = 250;

/**
 * Reference-counted channel listeners over one subscriber connection: the first listener of a
 * channel subscribes, the last one to leave unsubscribes. Shared by the adapters.
 */
export class Subscriptions {
  readonly #listeners = new Map<string, Set<(message: string) => void>>();
  readonly #pending = new Map<string, Promise<void>>();
  /** Channels whose last listener left a moment ago: still subscribed, unsubscribing on a timer. */
  readonly #lingering = new Map<string, NodeJS.Timeout>();

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
    const lingering = this.#lingering.get(channel);
    if (!listeners && lingering) {
      // Still subscribed from a moment ago: a task that waits again and again pays no SUBSCRIBE.
      clearTimeout(lingering);
      this.#lingering.delete(channel);
      listeners = new Set();
      this.#listeners.set(channel, listeners);
    } else if (!listeners) {
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
        this.#linger(channel);
      }
      return Promise.resolve();
    };
  }

  /**
   * Unsubscribes `channel` after LINGER_MS unless a listener comes back first. Never awaited by the
   * listener that left: leaving a wait must not hang on a frozen server. A later SUBSCRIBE of the
   * same channel goes out after this UNSUBSCRIBE on the same connection, so order holds.
   */
  #linger(channel: string): void {
    const timer = setTimeout(() => {
      this.#lingering.delete(channel);
      this.unsubscribeChannel(channel).catch(() => undefined);
    }, LINGER_MS);
    timer.unref();
    this.#lingering.set(channel, timer);
  }

  /** Drops every lingering channel's timer (the connection is closing anyway). */
  clear(): void {
    for (const timer of this.#lingering.values()) clearTimeout(timer);
    this.#lingering.clear();
  }

  get size(): number {
    return this.#listeners.size;
  }
}
