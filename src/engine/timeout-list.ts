import { LinkedList, type Linked } from './linked-list.js';

/** One entry of a {@link TimeoutList}: the caller's value, and its place in the list. */
export class TimeoutEntry<T> implements Linked<TimeoutEntry<T>> {
  prev: TimeoutEntry<T> | undefined;
  next: TimeoutEntry<T> | undefined;
  listed = false;

  constructor(
    readonly value: T,
    readonly at: number,
  ) {}
}

/**
 * Entries that each time out `delayMs` after they were added, unless removed first, on one timer
 * for the whole list. FixedDelayQueue does the same for keyed entries; this one is for entries
 * without a key (calls in flight), in a linked list. The delay is the same for all, so the list is
 * in the order they time out in. The timer never keeps the process alive.
 */
export class TimeoutList<T> {
  readonly #entries = new LinkedList<TimeoutEntry<T>>();
  #timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly delayMs: number,
    private readonly onTimeout: (value: T) => void,
  ) {}

  add(value: T): TimeoutEntry<T> {
    const entry = new TimeoutEntry(value, Date.now() + this.delayMs);
    this.#entries.append(entry);
    if (this.#timer === undefined) this.#arm(this.delayMs);
    return entry;
  }

  /** Takes `entry` out (it settled in time); the timer is left to find nothing due. */
  remove(entry: TimeoutEntry<T>): void {
    this.#entries.remove(entry);
  }

  #arm(ms: number): void {
    this.#timer = setTimeout(() => this.#fire(), ms);
    this.#timer.unref();
  }

  #fire(): void {
    this.#timer = undefined;
    const now = Date.now();
    let head = this.#entries.head;
    while (head && head.at <= now) {
      this.#entries.remove(head);
      this.onTimeout(head.value);
      head = this.#entries.head;
    }
    if (head) this.#arm(Math.max(1, head.at - now));
  }
}
