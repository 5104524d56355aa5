/**
 * The soak's verdict on growth: per series (each worker's heap, handles, listeners and latchkey's
 * own records; Redis' memory and keys; sections entered per minute), a least-squares fit over the
 * run after its first tenth (warm-up), what it says the series grew by over the run, and whether
 * that is flat: within a tenth of the series' mean, or an absolute floor for small counts.
 *
 * What is in flight follows the load: release markers and queue entries in Redis, sockets and timers
 * in a worker. A shared machine's speed drifts over half an hour (sections per minute 13,000 one
 * minute and 19,000 a few later), and such series drift with it. So each series is fitted against
 * time and the section rate together, and only the growth the rate does not explain counts. A leak
 * grows with the sections entered so far, which keeps rising when the rate falls back: the fit puts
 * it on time. When time and rate cannot be told apart (the rate only rose, or never changed), the
 * fit is against time alone, as strict as before.
 */
import type { HistoryRecord } from '../protocol.js';

export interface Trend {
  readonly series: string;
  readonly unit: string;
  readonly first: number;
  readonly last: number;
  readonly mean: number;
  /** What a line against time alone grew by from the start of the measured span to its end. */
  readonly growth: number;
  /** The part of that growth the section rate does not explain (= `growth` when it cannot be told). */
  readonly unexplained: number;
  readonly flat: boolean;
}

interface Point {
  readonly t: number;
  readonly v: number;
}

/** Allowed growth over the run: a tenth of the mean, but at least `floor` (in the series' unit). */
const FLOORS: Readonly<Record<string, number>> = {
  MB: 2,
  handles: 3,
  listeners: 3,
  // Live records rise and fall with the tasks (up to a few per task, ~22 tasks a worker); a leak of
  // one per section would add thousands over a soak.
  records: 100,
  keys: 50,
  'per min': 0,
};

/** Above this correlation between time and rate, the two are not told apart. */
const TOLD_APART = 0.9;

/**
 * The least-squares slope of `v` against time, with and without the rate beside it. `rate(t)`:
 * sections per minute around `t`, or undefined when the run has none.
 */
function slopes(points: readonly Point[], rate?: (t: number) => number): { alone: number; beyondRate: number } {
  const n = points.length;
  const rates = rate ? points.map((p) => rate(p.t)) : undefined;
  const mt = points.reduce((s, p) => s + p.t, 0) / n;
  const mv = points.reduce((s, p) => s + p.v, 0) / n;
  let stt = 0;
  let stv = 0;
  for (const p of points) {
    stt += (p.t - mt) ** 2;
    stv += (p.t - mt) * (p.v - mv);
  }
  const alone = stt === 0 ? 0 : stv / stt;
  if (!rates) return { alone, beyondRate: alone };
  const mr = rates.reduce((s, r) => s + r, 0) / n;
  let srr = 0;
  let str = 0;
  let srv = 0;
  points.forEach((p, i) => {
    const r = rates[i]! - mr;
    srr += r * r;
    str += (p.t - mt) * r;
    srv += r * (p.v - mv);
  });
  // Normal equations of v = a + c*t + b*rate, solved for c.
  if (srr === 0 || stt === 0 || str ** 2 / (stt * srr) > TOLD_APART ** 2) return { alone, beyondRate: alone };
  return { alone, beyondRate: (stv * srr - srv * str) / (stt * srr - str * str) };
}

function trend(
  series: string,
  unit: string,
  points: readonly Point[],
  rate?: (t: number) => number,
): Trend | undefined {
  if (points.length < 3) return undefined;
  const start = points[0]!.t;
  const end = points.at(-1)!.t;
  const measured = points.filter((p) => p.t >= start + (end - start) / 10);
  const n = measured.length;
  const mv = measured.reduce((s, p) => s + p.v, 0) / n;
  const span = measured.at(-1)!.t - measured[0]!.t;
  const { alone, beyondRate } = slopes(measured, rate);
  const growth = alone * span;
  const unexplained = beyondRate * span;
  const allowed = Math.max(Math.abs(mv) / 10, FLOORS[unit] ?? 0);
  // Sections per minute may fall a little with a slower machine, never climb away: only growth counts.
  const flat = unit === 'per min' ? growth > -allowed : unexplained < allowed;
  return { series, unit, first: measured[0]!.v, last: measured.at(-1)!.v, mean: mv, growth, unexplained, flat };
}

/** Sections entered per minute in the minute before `t` (all workers), from sorted entry times. */
function rateOf(enters: readonly number[]): ((t: number) => number) | undefined {
  if (enters.length === 0) return undefined;
  const before = (t: number): number => {
    let lo = 0;
    let hi = enters.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (enters[mid]! < t) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  return (t) => before(t) - before(t - 60_000);
}

const MB = 1024 * 1024;

/** The trends of a soak's history. */
export function soakTrends(records: readonly HistoryRecord[]): Trend[] {
  const byWorker = new Map<number, { heap: Point[]; handles: Point[]; listeners: Point[]; records: Point[] }>();
  const redisMemory: Point[] = [];
  const keys: Point[] = [];
  const enters: number[] = [];
  for (const r of records) {
    if (r.ev === 'stats') {
      let w = byWorker.get(r.w);
      if (!w) byWorker.set(r.w, (w = { heap: [], handles: [], listeners: [], records: [] }));
      w.heap.push({ t: r.t, v: r.heapUsed / MB });
      w.handles.push({ t: r.t, v: r.handles });
      w.listeners.push({ t: r.t, v: r.listeners });
      w.records.push({ t: r.t, v: r.records });
    } else if (r.ev === 'redis-stats') {
      redisMemory.push({ t: r.t, v: r.usedMemory / MB });
      keys.push({ t: r.t, v: r.keys });
    } else if (r.ev === 'enter') enters.push(r.t);
  }
  enters.sort((a, b) => a - b);
  const rate = rateOf(enters);
  const trends: (Trend | undefined)[] = [];
  for (const [w, s] of [...byWorker].sort((a, b) => a[0] - b[0])) {
    // Sampled after a full collection (the workers run with --expose-gc): what the heap keeps.
    trends.push(trend(`worker ${w} heap after GC`, 'MB', s.heap, rate));
    trends.push(trend(`worker ${w} active handles`, 'handles', s.handles, rate));
    trends.push(trend(`worker ${w} listeners`, 'listeners', s.listeners, rate));
    trends.push(trend(`worker ${w} latchkey records`, 'records', s.records, rate));
  }
  trends.push(trend('Redis used_memory', 'MB', redisMemory, rate));
  trends.push(trend('Redis keys', 'keys', keys, rate));
  trends.push(trend('sections entered', 'per min', perMinute(enters)));
  return trends.filter((t): t is Trend => t !== undefined);
}

/** Sections entered in each whole minute of the run. */
function perMinute(times: readonly number[]): Point[] {
  if (times.length === 0) return [];
  const start = times[0]!;
  const counts = new Map<number, number>();
  for (const t of times) {
    const minute = Math.floor((t - start) / 60_000);
    counts.set(minute, (counts.get(minute) ?? 0) + 1);
  }
  const whole = Math.floor((times.at(-1)! - start) / 60_000);
  return [...counts].filter(([minute]) => minute < whole).map(([minute, v]) => ({ t: start + minute * 60_000, v }));
}

export function renderTrends(trends: readonly Trend[]): string {
  const rows = trends.map(
    (t) =>
      `| ${t.series} | ${t.first.toFixed(1)} | ${t.last.toFixed(1)} | ${t.mean.toFixed(1)} | ` +
      `${signed(t.growth)} ${t.unit} | ${signed(t.unexplained)} | ${t.flat ? 'flat' : 'GROWS'} |`,
  );
  return [
    '| series | first | last | mean | fitted growth over the run | of it, beyond what the rate explains | |',
    '| --- | ---: | ---: | ---: | ---: | ---: | --- |',
    ...rows,
  ].join('\n');
}

const signed = (x: number): string => `${x >= 0 ? '+' : ''}${x.toFixed(1)}`;
