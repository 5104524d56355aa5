/**
 * The tables of scenario 5's pairs/s, scenario 7 (what a pair costs Redis) and scenario 8 (held
 * locks and waiters at scale), beside report.ts's.
 */
import { fixed, int, ms, table } from './markdown.js';
import type { BenchResults } from './report.js';
import { compare } from './targets.js';

/** Scenario 5's pairs/s, each against redlock's over the same five servers, round by round. */
export function multiThroughputTable(results: BenchResults): string {
  const rows = results.multiThroughput ?? [];
  const redlock = rows.find((row) => row.library === 'redlock');
  return table(
    ['library', 'servers', 'pairs/s', "to redlock's"],
    rows.map((row) => [
      row.library,
      String(row.servers ?? ''),
      int(row.pairsPerSec),
      redlock && row !== redlock ? compare(row, redlock).text : '',
    ]),
  );
}

/** Scenario 7: per acquire + release pair. */
export function redisCostTable(results: BenchResults): string {
  return table(
    [
      'library',
      'clients',
      'pairs',
      'script time (µs)',
      'scripts',
      'plain time (µs)',
      'plain commands',
      'run inside scripts',
      'Redis CPU (µs)',
    ],
    (results.redisCost ?? []).map((row) => [
      row.library,
      String(row.clients),
      int(row.pairs),
      fixed(row.scriptUs, 1),
      fixed(row.scripts, 2),
      fixed(row.plainUs, 1),
      row.plain > 0 ? `${fixed(row.plain, 2)} (${row.plainNames.join(', ')})` : '0',
      fixed(row.inner, 1),
      fixed(row.cpuUs, 1),
    ]),
  );
}

/** Scenario 8: locks held at once, and waiters queued at once. */
export function scaleTables(results: BenchResults): string[] {
  const held = results.held ?? [];
  const waiters = results.waiters ?? [];
  const parts: string[] = [];
  if (held.length > 0)
    parts.push(
      '8. Scale: locks held by one client (memory per lock after a forced GC; renewals per period, counted by Redis)',
      '',
      table(
        [
          'library',
          'held',
          'client B/lock',
          'Redis B/lock',
          'period (ms)',
          'renewal calls',
          'budget',
          'plain beside them',
          'Redis µs',
          'Redis µs per 1,000 locks',
          'take (s)',
          'lost',
        ],
        held.map((row) => [
          row.library + (row.renews ? '' : ' (no renewal)'),
          int(row.locks),
          int(row.clientBytes),
          int(row.redisBytes),
          int(row.periodMs),
          fixed(row.renewalScripts, 1),
          row.library.startsWith('latchkey') ? int(row.budget) : '',
          fixed(row.renewalPlain, 1),
          int(row.renewalUs),
          fixed((1_000 * row.renewalUs) / row.locks, 1),
          fixed(row.takeSec, 1),
          int(row.lost),
        ]),
      ),
    );
  if (waiters.length > 0)
    parts.push(
      '',
      '8. Scale: waiters queued at once, then drained (each takes its lock, holds it 0 ms, releases; per hand-over: what Redis counted)',
      '',
      table(
        [
          'library',
          'waiters',
          'locks',
          'client B/waiter',
          'Redis B/waiter',
          'drained',
          'drain (ms)',
          'hand-overs/s',
          'scripts',
          'plain',
          'Redis µs',
          'gave up',
        ],
        waiters.map((row) => [
          row.library,
          int(row.waiters),
          int(row.locks),
          int(row.clientBytes),
          int(row.redisBytes),
          row.capped ? `${int(row.drained)} (cap reached)` : int(row.drained),
          ms(row.drainMs),
          int(row.handOversPerSec),
          fixed(row.scripts, 2),
          fixed(row.plain, 2),
          fixed(row.redisUs, 1),
          int(row.failures),
        ]),
      ),
    );
  return parts;
}
