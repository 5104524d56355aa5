/**
 * A small seeded generator (mulberry32): the runner's fault schedule and each worker's hold and
 * think times follow from `--seed`, so a run can be repeated with the same plan. The interleaving
 * of processes is the machine's, and is not repeatable; the history records it instead.
 */
export class Rng {
  #state: number;

  constructor(seed: number) {
    this.#state = seed >>> 0;
  }

  /** Uniform in [0, 1). */
  next(): number {
    this.#state = (this.#state + 0x6d2b79f5) >>> 0;
    let t = this.#state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  }

  /** An integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  /** An integer drawn from a `[min, max]` range. */
  between(range: readonly [number, number]): number {
    return this.int(range[0], range[1]);
  }

  pick<T>(items: readonly T[]): T | undefined {
    return items.length === 0 ? undefined : items[Math.floor(this.next() * items.length)];
  }

  /** A derived generator, for a worker or a task (independent of how many numbers this one drew). */
  fork(salt: number): Rng {
    return new Rng(Math.imul(this.#state ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(salt + 1, 0xc2b2ae35));
  }
}

/** The clock shared by the runner and its workers on one machine (ms). */
export const now = (): number => performance.timeOrigin + performance.now();
