/**
 * The client's timers: things that fall due at a moment (a hold's proven end, a renewal, a call's
 * time limit), kept in order of that moment, with one timer set for the earliest. Adding, moving
 * and removing cost a few steps of a binary heap and allocate nothing, however many holds a
 * client has; when the timer fires, the owner takes what fell due.
 */
import { now } from '../clock.js';
import { setLongTimeout, type LongTimer } from './timers.js';

/** Something a DeadlineQueue keeps: when it falls due, and where it sits in the queue. */
export interface Due {
  /** When it falls due (epoch ms, clock.ts). Change it only through the queue (`move`). */
  at: number;
  /** Its index in the queue's heap; -1 while it is in no queue. */
  slot: number;
}

export class DeadlineQueue<T extends Due> {
  readonly #heap: T[] = [];
  #timer: LongTimer | undefined;
  /** When the timer fires; Infinity: no timer. */
  #timerAt = Infinity;
  #stopped = false;

  /** `onDue(now)` runs when the earliest item may have fallen due; it takes them with `takeDue`. */
  constructor(private readonly onDue: (time: number) => void) {}

  get size(): number {
    return this.#heap.length;
  }

  /** Every item, in no particular order. */
  get items(): readonly T[] {
    return this.#heap;
  }

  /** The earliest item, if any. */
  peek(): T | undefined {
    return this.#heap[0];
  }

  add(item: T): void {
    item.slot = this.#heap.length;
    this.#heap.push(item);
    this.#up(item.slot);
    this.#arm(item.at);
  }

  /** Sets when `item` falls due (it must be in this queue). */
  move(item: T, at: number): void {
    const earlier = at < item.at;
    item.at = at;
    if (earlier) {
      this.#up(item.slot);
      this.#arm(at);
    } else this.#down(item.slot);
  }

  /** Takes `item` out; nothing when it is in no queue. */
  remove(item: T): void {
    const slot = item.slot;
    if (slot < 0 || this.#heap[slot] !== item) return;
    item.slot = -1;
    const last = this.#heap.pop()!;
    if (last === item) return;
    last.slot = slot;
    this.#heap[slot] = last;
    this.#up(slot);
    this.#down(last.slot);
  }

  /** Takes out and returns the earliest item if it is due by `time`. */
  takeDue(time: number): T | undefined {
    const first = this.#heap[0];
    if (first === undefined || first.at > time) return undefined;
    this.remove(first);
    return first;
  }

  /** No timer from now on (client shutdown); the items stay for whoever wants them. */
  stop(): void {
    this.#stopped = true;
    this.#timer?.cancel();
    this.#timer = undefined;
    this.#timerAt = Infinity;
  }

  /** The timer must ring no later than `at`. A removed item's timer is left to ring and find nothing. */
  #arm(at: number): void {
    if (this.#stopped || at >= this.#timerAt) return;
    this.#timer?.cancel();
    this.#timerAt = at;
    this.#timer = setLongTimeout(this.#ring, at - now());
  }

  readonly #ring = (): void => {
    this.#timer = undefined;
    this.#timerAt = Infinity;
    this.onDue(now());
    const first = this.#heap[0];
    if (first !== undefined) this.#arm(first.at);
  };

  #up(slot: number): void {
    const heap = this.#heap;
    const item = heap[slot]!;
    while (slot > 0) {
      const parentSlot = (slot - 1) >> 1;
      const parent = heap[parentSlot]!;
      if (parent.at <= item.at) break;
      heap[slot] = parent;
      parent.slot = slot;
      slot = parentSlot;
    }
    heap[slot] = item;
    item.slot = slot;
  }

  #down(slot: number): void {
    const heap = this.#heap;
    const item = heap[slot]!;
    const length = heap.length;
    for (;;) {
      let child = 2 * slot + 1;
      if (child >= length) break;
      if (child + 1 < length && heap[child + 1]!.at < heap[child]!.at) child++;
      if (heap[child]!.at >= item.at) break;
      heap[slot] = heap[child]!;
      heap[slot]!.slot = slot;
      slot = child;
    }
    heap[slot] = item;
    item.slot = slot;
  }
}
