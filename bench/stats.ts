/** Small statistics helpers of the benchmark. */

import { jainIndex as jain, percentile } from '../src/cli/stats.js';

export { jain, percentile };

export function mean(values: readonly number[]): number {
  return values.length === 0 ? Number.NaN : values.reduce((a, b) => a + b, 0) / values.length;
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** Each round's rate in `a` over the same round's in `b` (the two ran side by side in every round). */
export function roundRatios(a: readonly number[], b: readonly number[]): number[] {
  return a.map((rate, round) => rate / b[round]!);
}

/**
 * An approximate 95% confidence interval of the median of `values` (from the order statistics,
 * distribution-free): the median of n paired ratios moves about as much as this between runs.
 */
export function medianInterval(values: readonly number[]): [low: number, high: number] {
  const sorted = [...values].sort((a, b) => a - b);
  const n = sorted.length;
  if (n === 0) return [Number.NaN, Number.NaN];
  const spread = (1.96 * Math.sqrt(n)) / 2;
  const low = Math.max(0, Math.ceil(n / 2 - spread) - 1);
  const high = Math.min(n - 1, Math.ceil(n / 2 + spread) - 1);
  return [sorted[low]!, sorted[high]!];
}

export function max(values: readonly number[]): number {
  return values.length === 0 ? Number.NaN : values.reduce((a, b) => Math.max(a, b), -Infinity);
}

/**
 * The clock every process of a run reads (ms, sub-ms precision): the machine's monotonic clock,
 * one for all processes. `performance.timeOrigin + performance.now()` is not: each process reads
 * its origin from the wall clock once at start-up, and one preempted while it does is off by a
 * fraction of a ms or more, which scenario 3 counted as holders overlapping across its hand-overs.
 */
export const sharedNow = (): number => Number(process.hrtime.bigint()) / 1e6;

/** One critical section as its holder saw it, on the shared clock (see sharedNow). */
export interface Interval {
  readonly worker: number;
  /** When the worker asked for the lock. */
  readonly want: number;
  /** When the acquisition was confirmed to it. */
  readonly got: number;
  /** When it started to release. */
  readonly released: number;
}

export interface ContentionStats {
  acquisitions: number;
  acquisitionsPerSec: number;
  utilisation: number;
  waitP50: number;
  waitP99: number;
  waitMax: number;
  gapP50: number;
  gapP99: number;
  /** Mean time a holder kept the lock (its critical section as it measured it). */
  holdMean: number;
  /** Share of acquisitions that went to the process that held the lock just before. */
  selfHandoffs: number;
  jain: number;
  overlaps: number;
}

/**
 * Contention statistics over the window [start, end]. Each interval [got, released] lies inside
 * the true hold (confirmed after it began, released before it ended), so two that intersect are a
 * real overlap. Waits still pending at the end count with what they had waited so far.
 */
export function contentionStats(
  intervals: readonly Interval[],
  pendingWaits: readonly number[],
  workers: number,
  start: number,
  end: number,
): ContentionStats {
  const wall = end - start;
  const inWindow = intervals
    .filter((interval) => interval.got >= start && interval.got < end)
    .sort((a, b) => a.got - b.got);
  let held = 0;
  for (const interval of intervals)
    held += Math.max(0, Math.min(end, interval.released) - Math.max(start, interval.got));
  const sorted = [...intervals].sort((a, b) => a.got - b.got);
  let overlaps = 0;
  for (let i = 1; i < sorted.length; i++) if (sorted[i]!.got < sorted[i - 1]!.released) overlaps++;
  const gaps: number[] = [];
  let self = 0;
  for (let i = 1; i < inWindow.length; i++) {
    const previous = inWindow[i - 1]!;
    const current = inWindow[i]!;
    if (previous.worker === current.worker) self++;
    else gaps.push(current.got - previous.released);
  }
  const waits = intervals
    .filter((interval) => interval.want >= start && interval.want < end)
    .map((interval) => interval.got - interval.want);
  waits.push(...pendingWaits);
  const shares = Array.from({ length: workers }, () => 0);
  for (const interval of inWindow) shares[interval.worker]!++;
  return {
    acquisitions: inWindow.length,
    acquisitionsPerSec: (inWindow.length * 1000) / wall,
    utilisation: held / wall,
    waitP50: percentile(waits, 50),
    waitP99: percentile(waits, 99),
    waitMax: max(waits),
    gapP50: percentile(gaps, 50),
    gapP99: percentile(gaps, 99),
    holdMean: mean(inWindow.map((interval) => interval.released - interval.got)),
    selfHandoffs: inWindow.length > 1 ? self / (inWindow.length - 1) : 0,
    jain: jain(shares),
    overlaps,
  };
}
