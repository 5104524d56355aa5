/**
 * Sections that overlapped in time though they may not.
 */
import type { Section } from './sections.js';

/** Two sections that overlapped in time and may not: who, and for how long. */
export interface Overlap {
  readonly a: string;
  readonly b: string;
  readonly ms: number;
  /** Both acted on the register: both writes accepted (a reader: it read to the end). */
  readonly accepted: boolean;
  /** Both in one worker process (tasks of one client, maybe on one shared handle). */
  readonly sameProcess: boolean;
}

export interface OverlapFigures {
  readonly pairs: Overlap[];
  /** The most sections in flight at once. */
  readonly maxConcurrent: number;
  /** Semaphore: entries that made more holders than permits. */
  readonly overPermits: number;
}

/** Whether a section did something to the resource that a concurrent one could clash with. */
export function acted(section: Section): boolean {
  if (!section.readAccepted || section.abandon !== undefined) return false;
  return section.mode === 'write' ? section.wrote : section.exited;
}

const conflict = (a: Section, b: Section): boolean =>
  a.mode !== 'permit' && b.mode !== 'permit' && (a.mode === 'write' || b.mode === 'write');

/**
 * Sweeps the sections of one resource in entry order. Exclusive locks: every two overlapping
 * sections clash; a read-write lock: when one of them writes; a semaphore: holders beyond `permits`.
 * Sections touching end to start do not overlap (the register saw the exit first).
 */
export function overlaps(sections: readonly Section[], permits: number | undefined): OverlapFigures {
  const sorted = [...sections].sort((a, b) => a.enter - b.enter);
  const pairs: Overlap[] = [];
  let active: Section[] = [];
  let maxConcurrent = 0;
  let overPermits = 0;
  for (const s of sorted) {
    active = active.filter((a) => a.exit > s.enter);
    for (const a of active) {
      if (!conflict(a, s)) continue;
      const ms = Math.min(a.exit, s.exit) - s.enter;
      pairs.push({ a: a.cs, b: s.cs, ms, accepted: acted(a) && acted(s), sameProcess: a.worker === s.worker });
    }
    active.push(s);
    maxConcurrent = Math.max(maxConcurrent, active.length);
    if (permits !== undefined && active.length > permits) overPermits++;
  }
  return { pairs, maxConcurrent, overPermits };
}

/** Percentile (nearest rank) of `values`; undefined when empty. */
export function percentile(values: readonly number[], p: number): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}
