/**
 * The demo's live progress line and its closing summary.
 */
import type { DemoOptions } from './demo.js';
import { formatMs, percentile } from './stats.js';

/** What the workers reported. */
export interface Tally {
  orders: number;
  overlaps: number;
  seconds: number;
  readonly waits: number[];
  readonly sold: Map<string, number>;
}

/** Redraws one progress line (a new line every second when not a terminal); stop() gives the seconds run. */
export function startProgress(options: DemoOptions, tally: Tally, out: NodeJS.WriteStream): { stop(): number } {
  const started = Date.now();
  const total = options.products * options.stock;
  const draw = (): void => {
    const elapsed = (Date.now() - started) / 1_000;
    const line =
      `  ${tally.orders}/${total} items sold by ${options.workers} processes  ` +
      `${(tally.orders / Math.max(elapsed, 0.001)).toFixed(0)} orders/s  wait p99 ${formatMs(percentile(tally.waits, 99))}  ` +
      `overlaps ${tally.overlaps}  ${elapsed.toFixed(1)} s`;
    out.write(out.isTTY ? `\r${line}` : `${line}\n`);
  };
  const timer = setInterval(draw, out.isTTY ? 100 : 1_000);
  let stopped: number | undefined;
  return {
    stop() {
      if (stopped === undefined) {
        clearInterval(timer);
        draw();
        if (out.isTTY) out.write('\n');
        stopped = (Date.now() - started) / 1_000;
      }
      return stopped;
    },
  };
}

/** Prints the summary; true when the run was safe (no overlap, stock equal to the orders). */
export function printSummary(
  options: DemoOptions,
  products: readonly string[],
  finalStock: readonly number[],
  tally: Tally,
  out: NodeJS.WriteStream,
): boolean {
  const initial = options.products * options.stock;
  const remaining = finalStock.reduce((a, b) => a + b, 0);
  const negative = finalStock.filter((stock) => stock < 0).length;
  const oversold = tally.orders - (initial - remaining);
  const perProduct = products.every((p, i) => options.stock - finalStock[i]! === (tally.sold.get(p) ?? 0));
  const ok = negative === 0 && oversold === 0 && perProduct && tally.overlaps === 0;
  let verdict: string;
  if (ok)
    verdict = `OK: one process per product at a time, nothing oversold${options.lock ? '' : ' (by luck: no lock)'}`;
  else if (!options.lock)
    verdict = `UNSAFE, as expected without the lock: ${tally.overlaps} overlaps, ${oversold} orders for items already sold`;
  else verdict = 'FAILED';
  out.write(
    [
      '',
      `Summary${options.lock ? '' : ' (control run without the lock)'}`,
      `  orders             ${tally.orders} in ${tally.seconds.toFixed(1)} s by ${options.workers} processes`,
      `  stock              ${initial} at start, ${remaining} left, ${initial - remaining} sold` +
        ` (${oversold === 0 && perProduct ? 'equal to the orders' : `${oversold} orders more than items sold`})`,
      `  negative stock     ${negative} products`,
      `  overlaps seen      ${tally.overlaps}`,
      ...(options.lock
        ? [
            `  lock wait          p50 ${formatMs(percentile(tally.waits, 50))}, p99 ${formatMs(percentile(tally.waits, 99))}`,
            `  acquisitions/s     ${(tally.orders / tally.seconds).toFixed(0)}`,
          ]
        : []),
      `  verdict            ${verdict}`,
      '',
    ].join('\n'),
  );
  return ok;
}
