import type { RedisConnection } from '../redis/connection.js';
import { FixedDelayQueue } from './fixed-delay-queue.js';

/** How long a channel stays subscribed after its last waiter left. */
const LINGER_MS = 250;

/**
 * Local waiters of one client, per channel. One subscription serves all waiters of a channel in
 * this process; a release message wakes as many waiters as it names (one per freed permit), the
 * earliest first, never all of them at once unless it says `*`.
 */
export class Waiters {
  readonly #channels = new Map<string, ChannelWaiters>();
  /** Channels whose last waiter left, until they unsubscribe (see #leave). */
  readonly #lingering = new FixedDelayQueue<string, ChannelWaiters>(LINGER_MS, (channel, entry) => {
    if (entry.waiters.length > 0 || this.#channels.get(channel) !== entry) return;
    this.#channels.delete(channel);
    entry.ready.then(() => entry.unsubscribe?.()).catch(() => undefined);
  });
  #closed = false;

  constructor(private readonly connection: RedisConnection) {}

  /**
   * Subscribes (once per channel) and enters a waiter that can park until woken. `id` lets a
   * message `=<id>` wake this very waiter: a release that handed the lock to it by name.
   */
  async join(channel: string, id?: string): Promise<Waiter> {
    if (this.#closed) throw new Error('waiters closed');
    let entry = this.#channels.get(channel);
    if (!entry) {
      const created = new ChannelWaiters();
      entry = created;
      this.#channels.set(channel, created);
      created.ready = this.connection
        .subscribe(channel, (message) => created.onMessage(message))
        .then(
          (unsubscribe) => {
            created.unsubscribe = unsubscribe;
          },
          (error: unknown) => {
            if (this.#channels.get(channel) === created) this.#channels.delete(channel);
            throw error;
          },
        );
    }
    this.#lingering.delete(channel);
    const waiter = new Waiter(entry, () => this.#leave(channel, entry), id);
    entry.waiters.push(waiter);
    try {
      await entry.ready;
    } catch (error) {
      entry.remove(waiter);
      throw error;
    }
    return waiter;
  }

  /** True while `channel` is subscribed (waiters on it, or lingering after the last one left). */
  isSubscribed(channel: string): boolean {
    return this.#channels.get(channel)?.unsubscribe !== undefined;
  }

  /**
   * The last waiter of a channel left: the channel stays subscribed for LINGER_MS, so that a task
   * that waits again and again (take, release, take: every worker of a busy lock) pays no
   * SUBSCRIBE round trip each time, then unsubscribes unless a waiter came back.
   */
  #leave(channel: string, entry: ChannelWaiters): void {
    if (entry.waiters.length > 0 || this.#channels.get(channel) !== entry) return;
    this.#lingering.add(channel, entry);
  }

  /** Wakes every parked waiter with `error` and drops every subscription (client shutdown). */
  async close(error: Error): Promise<void> {
    this.#closed = true;
    const entries = [...this.#channels.values()];
    this.#channels.clear();
    this.#lingering.clear();
    for (const entry of entries) {
      for (const waiter of entry.waiters) waiter.fail(error);
    }
    await Promise.all(
      entries.map((entry) =>
        entry.ready.then(
          () => entry.unsubscribe?.(),
          () => undefined,
        ),
      ),
    );
  }

  /** Number of channels with local waiters (for tests and inspection); lingering ones do not count. */
  get channelCount(): number {
    let count = 0;
    for (const entry of this.#channels.values()) if (entry.waiters.length > 0) count++;
    return count;
  }
}

class ChannelWaiters {
  readonly waiters: Waiter[] = [];
  /** Wake-ups that arrived while no waiter was parked; the next to park retries at once. */
  pendingWakes = 0;
  ready: Promise<void> = Promise.resolve();
  unsubscribe: (() => Promise<void>) | undefined;

  onMessage(message: string): void {
    if (message.startsWith('=')) {
      // Addressed to one owner (a hand-over); waiters of other processes ignore it.
      const id = message.slice(1);
      for (const waiter of this.waiters) if (waiter.id === id) waiter.wakeAddressed();
      return;
    }
    const count = message === '*' ? this.waiters.length : Math.max(1, Number.parseInt(message, 10) || 1);
    let woken = 0;
    for (const waiter of this.waiters) {
      if (woken === count) break;
      if (waiter.wake()) woken++;
    }
    const idle = this.waiters.length - this.parkedCount();
    this.pendingWakes = Math.min(this.pendingWakes + count - woken, idle);
  }

  parkedCount(): number {
    let parked = 0;
    for (const waiter of this.waiters) if (waiter.parked) parked++;
    return parked;
  }

  remove(waiter: Waiter): void {
    const index = this.waiters.indexOf(waiter);
    if (index !== -1) this.waiters.splice(index, 1);
  }
}

/** A parked waiter's timer ran out (a module function, so that parking allocates no closure for it). */
function parkTimedOut(waiter: Waiter): void {
  waiter.settlePark(false);
}

/** One task waiting on a channel. */
export class Waiter {
  /** Set while parked: how the park's promise settles. */
  #resolve: ((woken: boolean) => void) | undefined;
  #reject: ((error: unknown) => void) | undefined;
  #timer: NodeJS.Timeout | undefined;
  #signal: AbortSignal | undefined;
  /** Made once per waiter, not per park. */
  readonly #onAbort = (): void => this.#rejectPark(this.#signal?.reason);
  #failure: Error | undefined;
  /** Woken, but has not made its attempt yet: if it leaves now, the wake-up goes to the next waiter. */
  #unusedWake = false;
  /** A message addressed to this waiter arrived while it was not parked: its next park returns at once. */
  #addressed = false;
  /** A message addressed to this waiter arrived and was not yet taken by `takeAddressed()`. */
  #addressedUntaken = false;
  #left = false;

  constructor(
    private readonly entry: ChannelWaiters,
    private readonly onLeave: () => void,
    readonly id?: string,
  ) {}

  get parked(): boolean {
    return this.#resolve !== undefined;
  }

  /** Called by the channel on a release message; true when this waiter was parked and is now woken. */
  wake(): boolean {
    if (!this.#resolve) return false;
    this.#unusedWake = true;
    this.settlePark(true);
    return true;
  }

  /** Wakes this waiter for a message addressed to it, or keeps the wake-up for its next park. */
  wakeAddressed(): void {
    this.#addressedUntaken = true;
    if (this.#resolve) this.settlePark(true);
    else this.#addressed = true;
  }

  fail(error: Error): void {
    this.#failure = error;
    this.#rejectPark(error);
  }

  /** True once after a message addressed to this waiter arrived. */
  takeAddressed(): boolean {
    const addressed = this.#addressedUntaken;
    this.#addressedUntaken = false;
    return addressed;
  }

  /** Marks that the wake-up (if any) is being used by an attempt now. */
  beforeAttempt(): void {
    this.#unusedWake = false;
  }

  /**
   * Waits until a release message wakes this waiter (true) or `ms` pass (false). Rejects with the
   * signal's reason on abort.
   */
  park(ms: number, signal?: AbortSignal): Promise<boolean> {
    if (this.#failure) return Promise.reject(this.#failure);
    signal?.throwIfAborted();
    if (this.#addressed) {
      this.#addressed = false;
      return Promise.resolve(true);
    }
    if (this.entry.pendingWakes > 0) {
      this.entry.pendingWakes--;
      this.#unusedWake = true;
      return Promise.resolve(true);
    }
    return new Promise<boolean>((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
      this.#timer = setTimeout(parkTimedOut, ms, this);
      if (signal) {
        this.#signal = signal;
        signal.addEventListener('abort', this.#onAbort, { once: true });
      }
    });
  }

  /** @internal Ends the current park, if any, with `woken` (false: its time ran out). */
  settlePark(woken: boolean): void {
    const resolve = this.#resolve;
    if (!resolve) return;
    this.#unpark();
    resolve(woken);
  }

  #rejectPark(error: unknown): void {
    const reject = this.#reject;
    if (!reject) return;
    this.#unpark();
    reject(error);
  }

  #unpark(): void {
    this.#resolve = this.#reject = undefined;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#signal) {
      this.#signal.removeEventListener('abort', this.#onAbort);
      this.#signal = undefined;
    }
  }

  /**
   * Leaves the queue; passes on a wake-up it did not use, and if it was the last, lets the channel
   * linger (it unsubscribes later, on a timer): nothing to wait for.
   */
  leave(): void {
    if (this.#left) return;
    this.#left = true;
    this.entry.remove(this);
    if (this.#unusedWake) this.entry.onMessage('1');
    this.onLeave();
  }
}
