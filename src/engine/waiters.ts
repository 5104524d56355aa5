/**
 * The pub/sub registry of a client's waiters: one subscription per channel, one waiter woken per
 * freed permit, addressed hand-overs, parked waiters and their timeouts.
 */
import { now } from '../clock.js';
import { RedisUnavailableError } from '../errors.js';
import type { ChannelListener, RedisConnection } from '../redis/connection.js';
import { withTimeout } from '../redis/script-runner.js';
import { DeadlineQueue, type Due } from './deadline-queue.js';
import { abortable, setLongTimeout, type LongTimer } from './timers.js';

/** How long a channel stays subscribed after its last waiter left. */
const LINGER_MS = 250;

/**
 * Local waiters of one client, per channel. One subscription serves all waiters of a channel in
 * this process. A message names how many waiters it wakes (one per freed permit; `*`: all), the
 * earliest first, so one release does not wake a herd; `=<id>|<payload>` is addressed to the one
 * waiter whose id is `<id>` (a lock handed over to it). When the subscriber connection comes back
 * after it was lost, every waiter wakes to look again: messages published meanwhile were lost.
 */
export class Waiters {
  readonly #channels = new Map<string, Channel>();
  /**
   * Every parked waiter, by when its park times out: one queue and one timer for all of them, and
   * one listener on `closing`, rather than a timer and a listener per park.
   */
  readonly #parks = new DeadlineQueue<Park>((time) => {
    for (let due = this.#parks.takeDue(time); due; due = this.#parks.takeDue(time)) due.waiter.unpark();
  });

  constructor(
    private readonly connection: RedisConnection,
    private readonly commandTimeout: number,
    /** Aborts (with the ShutDownError) when the client shuts down; close() follows. */
    private readonly closing: AbortSignal,
  ) {
    closing.addEventListener(
      'abort',
      () => {
        this.#parks.stop();
        for (const park of [...this.#parks.items]) park.waiter.unpark(closing.reason);
      },
      { once: true },
    );
  }

  /**
   * Subscribes (once per channel) and enters a waiter that can park until woken. A subscription
   * not confirmed within commandTimeout (or by `deadline`) fails with RedisUnavailableError; an
   * abort of `signal`, or the client shutting down, ends the wait for it at once.
   */
  async join(channel: string, id?: string, deadline?: number, signal?: AbortSignal): Promise<Waiter> {
    this.closing.throwIfAborted();
    let entry = this.#channels.get(channel);
    if (!entry) {
      // Forgets this record only: one whose subscription failed lingers on after a new one took
      // its place, and must not drop that one (the client would no longer know it listens there,
      // and close() would not drop that subscription).
      const forget = (): void => {
        if (this.#channels.get(channel) === created) this.#channels.delete(channel);
      };
      const created = new Channel(forget);
      this.#channels.set(channel, created);
      created.ready = this.#subscribe(channel, created, deadline);
      created.ready.then(
        () => (created.subscribed = true),
        () => undefined,
      );
      // A failed subscription fails every waiter of the channel; the next join subscribes anew.
      created.ready.catch(forget);
      entry = created;
    }
    const waiter = new Waiter(entry, this.closing, this.#parks, id);
    entry.waiters.push(waiter);
    // Subscribed already (a channel that lingered): nothing to wait for.
    if (entry.subscribed) return waiter;
    try {
      await abortable(entry.ready, signal, this.closing);
    } catch (error) {
      waiter.leave();
      throw error;
    }
    return waiter;
  }

  async #subscribe(channel: string, entry: Channel, deadline: number | undefined): Promise<void> {
    const limit = Math.min(this.commandTimeout, deadline === undefined ? Infinity : Math.max(50, deadline - now()));
    let late = false;
    const subscribing = this.connection.subscribe(channel, entry);
    // Confirmed after the caller gave up: drop it rather than leak it.
    void subscribing.then((unsubscribe) => (late ? unsubscribe() : undefined)).catch(() => undefined);
    entry.unsubscribe = await withTimeout(subscribing, limit, () => {
      late = true;
      return new RedisUnavailableError(`Redis did not confirm the subscription to ${channel} within ${limit} ms`, {
        outcomeUnknown: true,
      });
    });
  }

  /** Whether this client listens on any channel (or is subscribing): a wait is on, or lingers. */
  get listening(): boolean {
    return this.#channels.size > 0;
  }

  /** Whether this client listens on `channel` (or is subscribing to it): a wait is on, or lingers. */
  isSubscribed(channel: string): boolean {
    return this.#channels.has(channel);
  }

  /**
   * Drops every subscription, after the client's `closing` aborted (which ended every wait, parked
   * or subscribing). Waits for no reply: a subscription still being made is dropped once
   * confirmed, and closing the connection ends them all anyway.
   */
  close(): void {
    const entries = [...this.#channels.values()];
    this.#channels.clear();
    for (const entry of entries) {
      entry.stopLingering();
      entry.ready.then(() => entry.unsubscribe?.()).catch(() => undefined);
    }
  }

  /** Channels with local waiters (for tests and inspection); lingering ones do not count. */
  get channelCount(): number {
    let count = 0;
    for (const entry of this.#channels.values()) if (entry.waiters.length > 0) count++;
    return count;
  }
}

class Channel implements ChannelListener {
  readonly waiters: Waiter[] = [];
  /** Its subscription is confirmed (`ready` resolved). */
  subscribed = false;
  /** Wake-ups that arrived while fewer waiters were parked; the next ones to park retry at once. */
  pendingWakes = 0;
  ready: Promise<void> = Promise.resolve();
  unsubscribe: (() => Promise<void>) | undefined;
  #linger: LongTimer | undefined;
  /** When the last waiter left. */
  #emptiedAt = 0;

  constructor(private readonly drop: () => void) {}

  message(text: string): void {
    if (text.startsWith('=')) {
      const bar = text.indexOf('|');
      const id = text.slice(1, bar === -1 ? undefined : bar);
      const payload = bar === -1 ? '' : text.slice(bar + 1);
      for (const waiter of this.waiters) if (waiter.id === id) waiter.deliver(payload);
      return;
    }
    const count = text === '*' ? this.waiters.length : Math.max(1, Number.parseInt(text, 10) || 1);
    let woken = 0;
    for (const waiter of this.waiters) {
      if (woken === count) break;
      if (waiter.wake(true)) woken++;
    }
    const idle = this.waiters.filter((waiter) => !waiter.parked).length;
    this.pendingWakes = Math.min(this.pendingWakes + count - woken, idle);
  }

  reconnected(): void {
    for (const waiter of this.waiters) waiter.wake(false);
  }

  /** The last waiter left: stay subscribed a moment, so that a task that waits again and again pays no SUBSCRIBE each time. */
  left(waiter: Waiter, unusedWake: boolean): void {
    const index = this.waiters.indexOf(waiter);
    if (index !== -1) this.waiters.splice(index, 1);
    // A wake-up it did not use goes to the next waiter, or a freed permit would wait for a timer.
    if (unusedWake) this.message('1');
    if (this.waiters.length > 0) return;
    this.#emptiedAt = now();
    // One timer per channel, set again only when it fires: a timer per departure cost a
    // hand-over ~14 us of the ~90 from its message to lock() resolving (a worker's cold path).
    this.#linger ??= setLongTimeout(() => this.#lingered(), LINGER_MS);
  }

  #lingered(): void {
    this.#linger = undefined;
    if (this.waiters.length > 0) return; // the last of them to leave sets it again
    const left = this.#emptiedAt + LINGER_MS - now();
    if (left > 0) {
      this.#linger = setLongTimeout(() => this.#lingered(), left);
      return;
    }
    this.drop();
    this.ready.then(() => this.unsubscribe?.()).catch(() => undefined);
  }

  stopLingering(): void {
    this.#linger?.cancel();
    this.#linger = undefined;
  }
}

/** A parked waiter, in the registry's queue until it is woken or its park times out. */
interface Park extends Due {
  readonly waiter: Waiter;
  readonly resolve: () => void;
  readonly reject: (reason: unknown) => void;
}

/** One task waiting on a channel. */
export class Waiter {
  #park: Park | undefined;
  /** Woken by a count message and not yet used by an attempt: passed on if this waiter leaves. */
  #unusedWake = false;
  /** Woken while not parked: the next park returns at once. */
  #early = false;
  /** The payload of the last message addressed to this waiter, until taken. */
  #message: string | undefined;
  #left = false;

  constructor(
    private readonly channel: Channel,
    /** The client's: its shutdown ends a park (the registry unparks every waiter then). */
    private readonly closing: AbortSignal,
    private readonly parks: DeadlineQueue<Park>,
    readonly id?: string,
  ) {}

  get parked(): boolean {
    return this.#park !== undefined;
  }

  /** True when this waiter was parked and is now woken; `counted`: by a message that wakes a number of waiters. */
  wake(counted: boolean): boolean {
    if (!this.#park) {
      if (!counted) this.#early = true;
      return false;
    }
    if (counted) this.#unusedWake = true;
    this.unpark();
    return true;
  }

  /** A message addressed to this waiter: kept for `takeMessage()`, and it wakes the waiter. */
  deliver(payload: string): void {
    this.#message = payload;
    if (this.#park) this.unpark();
    else this.#early = true;
  }

  /** The payload of a message addressed to this waiter since the last call, if any. */
  takeMessage(): string | undefined {
    const message = this.#message;
    this.#message = undefined;
    this.#unusedWake = false;
    return message;
  }

  /** Waits until woken or `ms` pass; rejects with the reason of `signal` or `closing` once one aborts. */
  park(ms: number, signal?: AbortSignal): Promise<void> {
    if (this.closing.aborted) return Promise.reject(this.closing.reason as Error);
    if (signal?.aborted) return Promise.reject(signal.reason as Error);
    if (this.#early || this.channel.pendingWakes > 0) {
      if (!this.#early) {
        this.channel.pendingWakes--;
        this.#unusedWake = true;
      }
      this.#early = false;
      return Promise.resolve();
    }
    const parked = new Promise<void>((resolve, reject) => {
      this.#park = { waiter: this, resolve, reject, at: now() + ms, slot: -1 };
      this.parks.add(this.#park);
    });
    if (!signal) return parked;
    const ended = abortable(parked, signal);
    ended.catch(() => this.unpark()); // aborted: no longer parked
    return ended;
  }

  /** Ends the park: woken, timed out, or (with `reason`) the client shut down. */
  unpark(reason?: unknown): void {
    const park = this.#park;
    if (!park) return;
    this.#park = undefined;
    this.parks.remove(park);
    if (reason === undefined) park.resolve();
    else park.reject(reason);
  }

  /** Leaves the channel; a wake-up it did not use goes to the next waiter. */
  leave(): void {
    if (this.#left) return;
    this.#left = true;
    this.channel.left(this, this.#unusedWake);
  }
}
