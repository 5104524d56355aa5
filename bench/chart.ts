/**
 * The benchmark's SVG chart of a run.
 */
import { FLOOR_LOCK_SCRIPTS, FLOOR_TWO_SCRIPTS, HAND_OVER_RING, isFloor } from './names.js';
import type { BenchResults } from './report.js';

/** Hand-written SVG: no charting dependency. Two log-scale bar panels, one colour per library. */
const COLORS: Record<string, string> = {
  [FLOOR_TWO_SCRIPTS]: '#9ca3af',
  [FLOOR_LOCK_SCRIPTS]: '#9ca3af',
  [HAND_OVER_RING]: '#9ca3af',
  'latchkey Lock': '#2563eb',
  'latchkey Lock (lease)': '#60a5fa',
  'latchkey FairLock': '#059669',
  'latchkey FairLock (lease)': '#34d399',
  'latchkey FencedLock (lease)': '#7c3aed',
  'latchkey MultiLock': '#0891b2',
  'latchkey RedLock': '#be185d',
  redlock: '#dc2626',
  'redis-semaphore': '#d97706',
};

/** A library's colour: the floors grey, an unknown library a darker grey. */
const colour = (library: string): string => COLORS[library] ?? (isFloor(library) ? '#9ca3af' : '#6b7280');

interface Group {
  label: string;
  bars: { library: string; value: number }[];
}

const escape = (text: string): string => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

function label(value: number): string {
  if (value >= 10_000) return `${Math.round(value / 1000)}k`;
  if (value >= 1000) return `${(value / 1000).toFixed(1)}k`;
  return value >= 10 ? String(Math.round(value)) : value.toFixed(1);
}

/** One panel: groups of bars on a log axis from the smallest to the largest decade. */
function panel(
  title: string,
  unit: string,
  groups: Group[],
  x0: number,
  y0: number,
  width: number,
  height: number,
): string {
  const values = groups
    .flatMap((group) => group.bars.map((bar) => bar.value))
    .filter((value) => value > 0 && Number.isFinite(value));
  if (values.length === 0) return '';
  const low = Math.floor(Math.log10(Math.min(...values)));
  const high = Math.ceil(Math.log10(Math.max(...values)));
  const plotTop = y0 + 30;
  const plotHeight = height - 80;
  const y = (value: number): number => plotTop + plotHeight * (1 - (Math.log10(value) - low) / Math.max(1, high - low));
  const out: string[] = [`<text x="${x0}" y="${y0 + 14}" class="title">${escape(title)}</text>`];
  for (let decade = low; decade <= high; decade++) {
    const gy = y(10 ** decade);
    out.push(`<line x1="${x0 + 50}" x2="${x0 + width}" y1="${gy}" y2="${gy}" class="grid"/>`);
    out.push(`<text x="${x0 + 45}" y="${gy + 4}" class="axis" text-anchor="end">${label(10 ** decade)}</text>`);
  }
  out.push(`<text x="${x0 + width}" y="${y0 + 14}" class="axis" text-anchor="end">${escape(unit)}</text>`);
  const groupWidth = (width - 60) / groups.length;
  groups.forEach((group, g) => {
    const gx = x0 + 60 + g * groupWidth;
    const barWidth = Math.min(28, (groupWidth - 12) / Math.max(1, group.bars.length));
    group.bars.forEach((bar, b) => {
      if (!(bar.value > 0) || !Number.isFinite(bar.value)) return;
      const bx = gx + 6 + b * barWidth;
      const by = y(bar.value);
      out.push(
        `<rect x="${bx.toFixed(1)}" y="${by.toFixed(1)}" width="${(barWidth - 2).toFixed(1)}" height="${(plotTop + plotHeight - by).toFixed(1)}" fill="${colour(bar.library)}"><title>${escape(`${bar.library}: ${label(bar.value)} ${unit}`)}</title></rect>`,
      );
      out.push(
        `<text x="${(bx + barWidth / 2 - 1).toFixed(1)}" y="${(by - 3).toFixed(1)}" class="value" text-anchor="middle">${label(bar.value)}</text>`,
      );
    });
    out.push(
      `<text x="${(gx + groupWidth / 2).toFixed(1)}" y="${plotTop + plotHeight + 16}" class="axis" text-anchor="middle">${escape(group.label)}</text>`,
    );
  });
  return out.join('\n');
}

/**
 * The benchmark chart: throughput per scenario (top) and the longest contended wait (bottom): the
 * tail is what scenario 3's target reads, where a barging lock's p99 hides its starved waiters.
 */
export function chart(results: BenchResults): string {
  const width = 960;
  const throughput: Group[] = [
    { label: '1: one client', bars: results.single.map((row) => ({ library: row.library, value: row.pairsPerSec })) },
    {
      label: '2: concurrent keys',
      bars: results.concurrent.map((row) => ({ library: row.library, value: row.pairsPerSec })),
    },
  ];
  const waits: Group[] = [];
  const configs = [...new Set(results.contention.map((row) => `${row.workers}|${row.holdMs}`))];
  for (const config of configs) {
    // One bar per library: the hand-over ring runs twice per configuration; its first run is shown.
    const rows = results.contention.filter(
      (row, i, all) =>
        `${row.workers}|${row.holdMs}` === config &&
        all.findIndex(
          (other) => other.library === row.library && other.workers === row.workers && other.holdMs === row.holdMs,
        ) === i,
    );
    const name = `3: W=${rows[0]!.workers}, hold ${rows[0]!.holdMs} ms`;
    throughput.push({
      label: name,
      bars: rows.map((row) => ({ library: row.library, value: row.acquisitionsPerSec })),
    });
    waits.push({ label: name, bars: rows.map((row) => ({ library: row.library, value: row.waitMax })) });
  }
  const groups = results.multiThroughput ?? [];
  if (groups.length > 0)
    throughput.push({
      label: '5: over 3 and 5 servers',
      bars: groups.map((row) => ({ library: row.library, value: row.pairsPerSec })),
    });
  const libraries = [...new Set([...results.single, ...results.contention, ...groups].map((row) => row.library))];
  // Spread over the width, in two or three rows when one would crowd the names.
  const rows = libraries.length > 12 ? 3 : libraries.length > 6 ? 2 : 1;
  const perRow = Math.max(1, Math.ceil(libraries.length / rows));
  const step = Math.min(155, (width - 40) / perRow);
  const top = rows > 2 ? 628 : 646;
  const legend = libraries
    .map((library, i) => {
      const [x, y] = [20 + (i % perRow) * step, top + Math.floor(i / perRow) * 18];
      return `<rect x="${x.toFixed(1)}" y="${y}" width="12" height="12" fill="${colour(library)}"/><text x="${(x + 16).toFixed(1)}" y="${y + 10}" class="axis">${escape(library)}</text>`;
    })
    .join('\n');
  const { machine } = results;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="700" viewBox="0 0 ${width} 700" font-family="system-ui, sans-serif">`,
    '<style>.title{font-size:15px;font-weight:600}.axis{font-size:11px;fill:#374151}.value{font-size:9px;fill:#111827}.grid{stroke:#e5e7eb}</style>',
    `<rect width="${width}" height="700" fill="#ffffff"/>`,
    panel(
      'Throughput (higher is better, log scale)',
      'acquire + release pairs per second',
      throughput,
      10,
      10,
      width - 20,
      320,
    ),
    panel(
      'Scenario 3: longest wait under contention (lower is better, log scale)',
      'ms',
      waits,
      10,
      330,
      width - 20,
      310,
    ),
    legend,
    `<text x="${width - 10}" y="690" class="axis" text-anchor="end">${escape(`${results.date.slice(0, 10)} · ${machine.cpus} cores · Node ${machine.node} · Redis ${machine.redis}`)}</text>`,
    '</svg>',
    '',
  ].join('\n');
}
