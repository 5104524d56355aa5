/** What an entry of a {@link LinkedList} carries: its own links, so that the list allocates nothing. */
export interface Linked<T> {
  prev: T | undefined;
  next: T | undefined;
  /** True while the entry is in a list. */
  listed: boolean;
}

/**
 * A doubly linked list of entries that carry their own links: appending and removing are O(1)
 * and hash nothing. (A Set of fresh objects makes V8 give each one an identity hash, and a Map
 * keyed by them does the same, on every lock() of a hot loop.)
 */
export class LinkedList<T extends Linked<T>> {
  #head: T | undefined;
  #tail: T | undefined;
  #size = 0;

  /** The first entry (the one appended longest ago), if any. */
  get head(): T | undefined {
    return this.#head;
  }

  get size(): number {
    return this.#size;
  }

  append(entry: T): void {
    entry.prev = this.#tail;
    entry.next = undefined;
    entry.listed = true;
    if (this.#tail) this.#tail.next = entry;
    else this.#head = entry;
    this.#tail = entry;
    this.#size++;
  }

  /** Takes `entry` out; false when it was not in the list (removing twice is harmless). */
  remove(entry: T): boolean {
    if (!entry.listed) return false;
    entry.listed = false;
    const { prev, next } = entry;
    if (prev) prev.next = next;
    else this.#head = next;
    if (next) next.prev = prev;
    else this.#tail = prev;
    entry.prev = entry.next = undefined;
    this.#size--;
    return true;
  }

  /** The entries now, as an array: work on them while entries come and go. */
  snapshot(): T[] {
    const entries: T[] = [];
    for (let entry = this.#head; entry; entry = entry.next) entries.push(entry);
    return entries;
  }
}
