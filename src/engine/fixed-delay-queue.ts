/**
 * Runs each entry `delayMs` after it was (last) added, unless it is deleted first, on one timer for
 * the whole queue. Adding and deleting touch only a Map: a per-entry setTimeout and clearTimeout
 * cost microseconds on the path from a hand-over message to `lock()` resolving, where every
 * acquisition pays them. The delay is the same for all, so the Map's insertion order is the order
 * they fall due in. The timer never keeps the process alive.
 */
export class FixedDelayQueue<K, V> {
  readonly #due = new Map<K, { readonly at: number; readonly value: V }>();
  #timer: NodeJS.Timeout | undefined;
  /** Inside #fire: entries added by `run` are timed after the loop, on one timer. */
  #firing = false;

  constructor(
    private readonly delayMs: number,
    private readonly run: (key: K, value: V) => void,
  ) {}

  /** (Re)schedules `key`: it runs `delayMs` from now with `value`. */
  add(key: K, value: V): void {
    this.#due.delete(key); // re-added: it moves to the end, where its new time belongs
    this.#due.set(key, { at: Date.now() + this.delayMs, value });
    if (this.#timer === undefined && !this.#firing) this.#arm(this.delayMs);
  }

  /** Cancels `key`; the timer is left to find nothing due. */
  delete(key: K): void {
    this.#due.delete(key);
  }

  get size(): number {
    return this.#due.size;
  }

  /** Cancels everything. */
  clear(): void {
    this.#due.clear();
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #arm(ms: number): void {
    this.#timer = setTimeout(() => this.#fire(), ms);
    this.#timer.unref();
  }

  #fire(): void {
    this.#timer = undefined;
    this.#firing = true;
    try {
      const now = Date.now();
      for (const [key, entry] of this.#due) {
        if (entry.at > now) break;
        this.#due.delete(key);
        this.run(key, entry.value);
      }
    } finally {
      this.#firing = false;
    }
    // One timer for what is left (entries `run` added included): the first is the earliest.
    const next = this.#due.values().next();
    if (!next.done) this.#arm(Math.max(1, next.value.at - Date.now()));
  }
}
