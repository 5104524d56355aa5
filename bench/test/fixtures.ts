/** Fixed inputs for the target checks' tests: rows of a run, a run around them, a check by its bar. */
import assert from 'node:assert/strict';
import type { BenchResults } from '../report.js';
import type { ContentionResult } from '../scenarios/contention.js';
import type { TargetCheck } from '../targets.js';

export function contention(library: string, fields: Partial<ContentionResult>): ContentionResult {
  return {
    library,
    workers: 8,
    holdMs: 1,
    failures: 0,
    unanswered: 0,
    acquisitions: 1000,
    acquisitionsPerSec: 400,
    utilisation: 0.5,
    waitP50: 10,
    waitP99: 20,
    waitMax: 30,
    gapP50: 1,
    gapP99: 2,
    holdMean: 1.2,
    selfHandoffs: 0,
    jain: 1,
    overlaps: 0,
    ...fields,
  };
}

export function results(rows: ContentionResult[], fields: Partial<BenchResults> = {}): BenchResults {
  return {
    date: '2026-11-24T00:00:00.000Z',
    quick: false,
    machine: { cpus: 2, cpu: 'test', node: 'v20', redis: '7' },
    durationSec: 1,
    single: [],
    concurrent: [],
    contention: rows,
    notificationFloors: [{ spacingMs: 1, samples: 100, p50: 0.4, p99: 1, mean: 0.5 }],
    watchdog: [],
    multi: [],
    missing: [],
    ...fields,
  };
}

/** The check of `scenario` whose bar starts with `target`, for `subject` (exactly, else the first containing it). */
export const find = (checks: TargetCheck[], scenario: number, target: string, subject = ''): TargetCheck => {
  const of = checks.filter((check) => check.scenario === scenario && check.target.startsWith(target));
  const found = of.find((check) => check.subject === subject) ?? of.find((check) => check.subject.includes(subject));
  assert.ok(found, `no check of scenario ${scenario} starting "${target}"`);
  return found;
};

/** A throughput row whose rounds are `rounds` (pairs/s). */
export const throughput = (library: string, rounds: number[]) => ({ library, pairsPerSec: rounds[1]!, rounds });
