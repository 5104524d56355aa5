/**
 * The checker's entry: a scenario's history in, its verdict and figures out.
 */
import type { ClientOptions, HistoryRecord, ResourceSpec } from '../protocol.js';
import type { Expectations } from '../scenarios/types.js';
import { figuresOf, type Figures } from './figures.js';
import { reasons } from './reasons.js';
import { timeline } from './sections.js';

/** What the checker needs of a scenario; written as the first line of its history. */
export interface ScenarioSpec {
  readonly name: string;
  readonly title: string;
  readonly control: boolean;
  /** The scenario injects faults: a run without any tested nothing. */
  readonly faulty?: boolean;
  readonly client: ClientOptions;
  readonly resources: readonly ResourceSpec[];
  readonly expect: Expectations;
}

export interface Verdict {
  readonly name: string;
  readonly title: string;
  readonly control: boolean;
  readonly figures: readonly Figures[];
  readonly strayKeys: readonly string[];
  /** Why it failed (a control: why it did not fail as it must). Empty: passed. */
  readonly reasons: readonly string[];
  readonly pass: boolean;
  /** Faults injected, by kind. */
  readonly faults: Readonly<Record<string, number>>;
}

export interface RunExtras {
  readonly stuck?: readonly number[];
  readonly harnessError?: string;
}

export function specFromHistory(records: readonly HistoryRecord[]): ScenarioSpec {
  const first = records[0];
  if (first?.ev !== 'scenario') throw new Error('history does not start with its scenario');
  return first.spec as ScenarioSpec;
}

/**
 * Judges one scenario's history. A control scenario runs without any lock: it passes (as a
 * control) only when the checker finds the overlaps and lost updates that must then happen.
 */
export function analyze(records: readonly HistoryRecord[], extras: RunExtras = {}): Verdict {
  const spec = specFromHistory(records);
  const t = timeline(records);
  const lease = spec.client.watchdogTimeout ?? 30_000;
  const faulted = t.faults.length > 0;
  const figures = spec.resources.map((res) => figuresOf(t, res, spec.expect, lease));
  const strayKeys = t.strayKeys.map((k) => `${k.key} (${k.type}, server ${k.server})`);
  const why = figures.flatMap((f) => reasons(f, spec.expect, faulted).map((r) => `${f.res}: ${r}`));
  if (spec.faulty && !faulted) why.push('no fault was injected (no target found, or no time left for one)');
  if (strayKeys.length > 0) why.push(`${strayKeys.length} keys left without a TTL, e.g. ${strayKeys[0]}`);
  if (extras.stuck && extras.stuck.length > 0)
    why.push(
      `workers ${extras.stuck.join(', ')} did not finish their tasks when told (hung or died: see the workers log)`,
    );
  if (extras.harnessError) why.push(`harness: ${extras.harnessError.split('\n')[0]}`);
  for (const note of t.notes)
    if (note.startsWith('harness error') && !extras.harnessError) why.push(note.split('\n')[0] ?? note);
  const faults: Record<string, number> = {};
  for (const f of t.faults) faults[f.kind] = (faults[f.kind] ?? 0) + 1;
  if (!spec.control) return { ...spec, figures, strayKeys, reasons: why, pass: why.length === 0, faults };
  const caught = figures.some((f) => f.believed > 0) && figures.some((f) => (f.lostUpdates ?? 0) > 0);
  const controlWhy = caught
    ? []
    : ['the checker found no overlap or no lost update without a lock: it cannot be trusted'];
  return { ...spec, figures, strayKeys, reasons: controlWhy, pass: caught, faults };
}
