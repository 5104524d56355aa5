/** Small statistics shared by the demo and the benchmarks. */

/** The p-th percentile (0-100) of `values` (nearest rank); NaN for none. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank]!;
}

/** Jain's fairness index of per-party shares: 1 when all are equal, 1/n when one takes all; NaN for no shares. */
export function jainIndex(shares: readonly number[]): number {
  const sum = shares.reduce((a, b) => a + b, 0);
  const squares = shares.reduce((a, b) => a + b * b, 0);
  return squares === 0 ? Number.NaN : (sum * sum) / (shares.length * squares);
}

/** Formats milliseconds for a terminal: "0.42 ms", "12.3 ms", "1.20 s". */
export function formatMs(ms: number): string {
  if (!Number.isFinite(ms)) return '-';
  if (ms >= 1_000) return `${(ms / 1_000).toFixed(2)} s`;
  return ms >= 10 ? `${ms.toFixed(1)} ms` : `${ms.toFixed(2)} ms`;
}
