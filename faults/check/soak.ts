/**
 * The soak's verdict on growth: per series (each worker's heap, handles, listeners and latchkey's
 * own records; Redis' memory and keys; sections entered per minute), the least-squares line over the run after its
 * first tenth (warm-up), what it says the series grew by over the run, and whether that is flat:
 * within a tenth of the series' mean, or an absolute floor for small counts.
 */
import type { HistoryRecord } from '../protocol.js';

export interface Trend {
  readonly series: string;
  readonly unit: string;
  readonly first: number;
  readonly last: number;
  readonly mean: number;
  /** What the fitted line grew by from the start of the measured span to its end. */
  readonly growth: number;
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

function trend(series: string, unit: string, points: readonly Point[]): Trend | undefined {
  if (points.length < 3) return undefined;
  const start = points[0]!.t;
  const end = points.at(-1)!.t;
  const measured = points.filter((p) => p.t >= start + (end - start) / 10);
  const n = measured.length;
  const mt = measured.reduce((s, p) => s + p.t, 0) / n;
  const mv = measured.reduce((s, p) => s + p.v, 0) / n;
  const cov = measured.reduce((s, p) => s + (p.t - mt) * (p.v - mv), 0);
  const vt = measured.reduce((s, p) => s + (p.t - mt) ** 2, 0);
  const slope = vt === 0 ? 0 : cov / vt;
  const growth = slope * (measured.at(-1)!.t - measured[0]!.t);
  const allowed = Math.max(Math.abs(mv) / 10, FLOORS[unit] ?? 0);
  // Sections per minute may fall a little with a slower machine, never climb away: only growth counts.
  const flat = unit === 'per min' ? growth > -allowed : growth < allowed;
  return { series, unit, first: measured[0]!.v, last: measured.at(-1)!.v, mean: mv, growth, flat };
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
  const trends: (Trend | undefined)[] = [];
  for (const [w, s] of [...byWorker].sort((a, b) => a[0] - b[0])) {
    // Sampled after a full collection (the workers run with --expose-gc): what the heap keeps.
    trends.push(trend(`worker ${w} heap after GC`, 'MB', s.heap));
    trends.push(trend(`worker ${w} active handles`, 'handles', s.handles));
    trends.push(trend(`worker ${w} listeners`, 'listeners', s.listeners));
    trends.push(trend(`worker ${w} latchkey records`, 'records', s.records));
  }
  trends.push(trend('Redis used_memory', 'MB', redisMemory));
  trends.push(trend('Redis keys', 'keys', keys));
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
      `${t.growth >= 0 ? '+' : ''}${t.growth.toFixed(1)} ${t.unit} | ${t.flat ? 'flat' : 'GROWS'} |`,
  );
  return [
    '| series | first | last | mean | fitted growth over the run | |',
    '| --- | ---: | ---: | ---: | ---: | --- |',
    ...rows,
  ].join('\n');
}
