/** One entry of a {@link TimeoutList}: the caller's value, and its place in the list. */
export class TimeoutEntry<T> {
  prev: TimeoutEntry<T> | undefined;
  next: TimeoutEntry<T> | undefined;
  /** False once removed or timed out. */
  listed = true;

  constructor(
    readonly value: T,
    readonly at: number,
  ) {}
}

/**
 * Entries that each time out `delayMs` after they were added, unless removed first, on one timer
 * for the whole list. FixedDelayQueue does the same for keyed entries; this one is for entries
 * without a key (calls in flight): a linked list, so that adding and removing hash nothing (a Map
 * or Set keyed by a fresh object makes V8 give it an identity hash, on every call). The delay is the
 * same for all, so the list is in the order they time out in. The timer never keeps the process alive.
 */
export class TimeoutList<T> {
  #head: TimeoutEntry<T> | undefined;
  #tail: TimeoutEntry<T> | undefined;
  #timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly delayMs: number,
    private readonly onTimeout: (value: T) => void,
  ) {}

  add(value: T): TimeoutEntry<T> {
    const entry = new TimeoutEntry(value, Date.now() + this.delayMs);
    const tail = this.#tail;
    if (tail) {
      tail.next = entry;
      entry.prev = tail;
    } else {
      this.#head = entry;
    }
    this.#tail = entry;
    if (this.#timer === undefined) this.#arm(this.delayMs);
    return entry;
  }

  /** Takes `entry` out (it settled in time); the timer is left to find nothing due. */
  remove(entry: TimeoutEntry<T>): void {
    if (!entry.listed) return;
    entry.listed = false;
    const { prev, next } = entry;
    if (prev) prev.next = next;
    else this.#head = next;
    if (next) next.prev = prev;
    else this.#tail = prev;
    entry.prev = entry.next = undefined;
  }

  #arm(ms: number): void {
    this.#timer = setTimeout(() => this.#fire(), ms);
    this.#timer.unref();
  }

  #fire(): void {
    this.#timer = undefined;
    const now = Date.now();
    let head = this.#head;
    while (head && head.at <= now) {
      this.remove(head);
      this.onTimeout(head.value);
      head = this.#head;
    }
    if (head) this.#arm(Math.max(1, head.at - now));
  }
}
