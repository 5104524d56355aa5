/**
 * Two runs side by side on the figures that say whether latchkey regressed: scenario 1's ratios
 * (to the floor and to redis-semaphore, round by round, with their 95% intervals) and scenario 3's
 * utilisation against the hand-over ring and wait max against the best peer. Each run is compared
 * with what ran beside it, never in absolute terms: the machine differs from one run to the next.
 * `npm run bench -- --compare OLD.json,NEW.json`.
 */
import { FLOOR_TWO_SCRIPTS, HAND_OVER_RING, isFloor } from './names.js';
import type { BenchResults } from './report.js';
import type { ContentionResult } from './scenarios/contention.js';
import type { ThroughputResult } from './scenarios/single.js';
import { medianInterval, median, roundRatios } from './stats.js';

const num = (value: number, digits = 2): string => (Number.isFinite(value) ? value.toFixed(digits) : '–');

/** The median of the rounds' ratios and its 95% interval, as "0.97 (0.95-0.99)". */
function pairedText(a: ThroughputResult | undefined, b: ThroughputResult | undefined): string {
  if (!a?.rounds || !b?.rounds) return '–';
  const ratios = roundRatios(a.rounds, b.rounds);
  const [low, high] = medianInterval(ratios);
  return `${num(median(ratios))} (${num(low)}-${num(high)})`;
}

/** Utilisation over the mean of the ring's runs; wait max over the best peer's; the ring's own spread. */
function contentionFigures(results: BenchResults, row: ContentionResult): string[] {
  const same = (r: ContentionResult): boolean => r.workers === row.workers && r.holdMs === row.holdMs;
  const ring = results.contention.filter((r) => same(r) && r.library === HAND_OVER_RING);
  const peers = results.contention.filter((r) => same(r) && !r.library.startsWith('latchkey') && !isFloor(r.library));
  const ringMean = ring.reduce((sum, r) => sum + r.utilisation, 0) / ring.length;
  const ringSpread = ring.length > 1 ? Math.abs(ring[0]!.utilisation - ring[1]!.utilisation) / ringMean : Number.NaN;
  const bestMax = Math.min(...peers.map((p) => p.waitMax));
  return [
    num(row.utilisation / ringMean, 3),
    num(ringSpread, 3),
    `${num(row.waitMax, 1)} / ${num(bestMax, 0)} = ${num(bestMax / row.waitMax, 1)}x lower`,
    num(row.jain, 3),
  ];
}

export function compareRuns(before: BenchResults, after: BenchResults): string {
  const lines: string[] = [];
  const label = (results: BenchResults): string => results.date.slice(0, 16).replace('T', ' ');
  lines.push(`Scenario 1: median of the paired rounds' ratios (95% interval)`, '');
  lines.push('| library | run | of floor | to redis-semaphore |', '| --- | --- | ---: | ---: |');
  const single = (results: BenchResults, name: string) => results.single.find((r) => r.library === name);
  for (const name of after.single.filter((r) => r.library.startsWith('latchkey')).map((r) => r.library))
    for (const results of [before, after])
      lines.push(
        `| ${name} | ${label(results)} | ${pairedText(single(results, name), single(results, FLOOR_TWO_SCRIPTS))} | ` +
          `${pairedText(single(results, name), single(results, 'redis-semaphore'))} |`,
      );
  lines.push(
    '',
    'Scenario 3: utilisation over the hand-over ring (mean of its runs), wait max against the best peer',
    '',
  );
  lines.push(
    '| library | W | hold | run | util / ring | ring spread | wait max / best peer (ms) | Jain |',
    '| --- | ---: | ---: | --- | ---: | ---: | ---: | ---: |',
  );
  for (const row of after.contention.filter((r) => r.library.startsWith('latchkey')))
    for (const results of [before, after]) {
      const match = results.contention.find(
        (r) => r.library === row.library && r.workers === row.workers && r.holdMs === row.holdMs,
      );
      if (!match) continue;
      lines.push(
        `| ${row.library} | ${row.workers} | ${row.holdMs} | ${label(results)} | ${contentionFigures(results, match).join(' | ')} |`,
      );
    }
  lines.push(
    '',
    'ring spread: how far apart the ring\u2019s two runs of that configuration were, over their mean (the noise of a utilisation ratio within one run).',
  );
  return lines.join('\n');
}
