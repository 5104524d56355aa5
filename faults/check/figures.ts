/**
 * Everything the checker measures for one resource of a scenario: overlaps, lost updates, loss
 * signals, lost holds and detection, waits, wrong results.
 */
import type { ErrorInfo, ResourceSpec } from '../protocol.js';
import type { Expectations } from '../scenarios/types.js';
import { overlaps, type Overlap } from './overlaps.js';
import { exposed, inScope, type Fault, type Section, type Timeline } from './sections.js';

/** Everything measured for one resource of one scenario. */
export interface Figures {
  readonly res: string;
  readonly primitive: string;
  readonly permits: number | undefined;
  readonly sections: number;
  readonly abandoned: number;
  /** Clashing overlaps in time (what holders believed), and those longer than the tolerance. */
  readonly believed: number;
  readonly believedOverTolerance: number;
  readonly believedMaxMs: number;
  /** Clashing overlaps in which both sections acted on the register. */
  readonly accepted: number;
  readonly lostUpdates: number | undefined;
  readonly maxConcurrent: number;
  readonly overPermits: number;
  readonly errors: string[];
  readonly allowedErrors: number;
  readonly lossSignals: number;
  readonly spurious: string[];
  readonly detection: Detection;
  readonly wrong: string[];
  readonly starved: string[];
  /** Sections entered after the last fault ended. */
  readonly afterFaults: number;
  /** The longest a task waited for its primitive (ms; a wait still open at the end counts to then). */
  readonly maxWaitMs: number;
  /** The clashing pairs (over the tolerance / accepted), for the reasons. */
  readonly overTolerance: readonly Overlap[];
  readonly acceptedPairs: readonly Overlap[];
}

/** Holds a fault took away, and how their holders learned it. */
export interface Detection {
  readonly victims: number;
  readonly bySignal: number;
  readonly atRelease: number;
  readonly silent: string[];
  /** Signals that came later than the bound while the holder was still in its section. */
  readonly late: string[];
  /** From the fault's end to the signal, for faults that say when the hold was lost (ms). */
  readonly latencies: number[];
}

const LOSS_CODES = new Set(['LATCHKEY_LOCK_NOT_HELD', 'LATCHKEY_LOCK_LOST', 'LATCHKEY_MEMBER_RELEASE']);
const isLossError = (e: ErrorInfo | undefined): boolean => e !== undefined && LOSS_CODES.has(e.code ?? '');
const allowed = (e: ErrorInfo, expect: Expectations): boolean =>
  expect.allowedErrors.includes(e.name) || (e.code !== undefined && expect.allowedErrors.includes(e.code));
const describe = (e: ErrorInfo): string => `${e.name}${e.code ? ` (${e.code})` : ''}: ${e.message.slice(0, 140)}`;

/** The holds each hold-taking fault took: sections of its scope in flight when it began and held past the loss. */
function detection(sections: readonly Section[], faults: readonly Fault[], boundMs: number | undefined): Detection {
  const result: Detection = { victims: 0, bySignal: 0, atRelease: 0, silent: [], late: [], latencies: [] };
  const counted = { victims: 0, bySignal: 0, atRelease: 0 };
  for (const f of faults) {
    if (!f.takesHolds) continue;
    for (const s of sections) {
      // A hold given back before the fault could take it (its lease still ran) was never lost.
      const heldUntil = s.release?.t ?? s.exit;
      if (!inScope(f.scope, s.worker, s.cs) || s.enter > f.start || heldUntil < f.start + f.lostAfterMs) continue;
      counted.victims++;
      if (s.lostAt !== undefined) {
        counted.bySignal++;
        if (f.detect) result.latencies.push(Math.max(0, s.lostAt - f.end));
      } else if (isLossError(s.release?.error)) counted.atRelease++;
      else result.silent.push(s.cs);
      const bound = boundMs === undefined || !f.detect ? undefined : f.end + boundMs;
      const inTime = s.lostAt !== undefined && bound !== undefined && s.lostAt <= bound;
      if (bound !== undefined && !inTime && (s.exit > bound || s.abandon !== undefined)) result.late.push(s.cs);
    }
  }
  return { ...result, ...counted };
}

function errorsOf(t: Timeline, res: string, sections: readonly Section[], expect: Expectations, tailMs: number) {
  const errors: string[] = [];
  const wrong: string[] = [];
  let allowedCount = 0;
  for (const e of t.events) {
    if (e.kind === 'error' && e.res === res) {
      if (allowed(e.error, expect)) allowedCount++;
      else errors.push(`${e.op} ${e.task}: ${describe(e.error)}`);
    }
    if (e.kind === 'released' && e.res === res && e.error) {
      // A release outside any section (an aborted wait's hold): a failure unless allowed.
      if (allowed(e.error, expect)) allowedCount++;
      else errors.push(`release ${e.task}: ${describe(e.error)}`);
    }
  }
  for (const s of sections) {
    const error = s.release?.error;
    if (!error) continue;
    if (isLossError(error)) {
      if (s.lostAt === undefined && !exposed(s, t.faults, tailMs))
        wrong.push(`${s.cs}: release rejected though the hold was never lost: ${describe(error)}`);
    } else if (allowed(error, expect)) allowedCount++;
    else errors.push(`release ${s.cs}: ${describe(error)}`);
  }
  return { errors, wrong, allowedCount };
}

function wrongResults(
  t: Timeline,
  res: string,
  sections: readonly Section[],
  tailMs: number,
  uncertain: boolean,
): string[] {
  const wrong: string[] = [];
  const bySection = new Map(sections.map((s) => [s.cs, s]));
  for (const e of t.events) {
    if (!('res' in e) || e.res !== res) continue;
    // A hold a fault may have taken can count 0 or be granted late: not wrong there.
    const excused = (cs: string | undefined): boolean => {
      const section = cs === undefined ? undefined : bySection.get(cs);
      if (section?.lostAt !== undefined) return true;
      return exposed(section ?? ({ cs, worker: e.w, enter: e.t, exit: e.t } as Section), t.faults, tailMs);
    };
    if (e.kind === 'wrong' && !excused(e.cs))
      wrong.push(`${e.cs ?? e.task}: ${e.what}: expected ${e.expected}, got ${e.actual}`);
    if (e.kind === 'stale-grant' && !excused(e.cs)) wrong.push(`${e.cs}: acquired with a lease signal already aborted`);
  }
  for (const s of t.endStates.filter((e) => e.res === res && !e.ok)) {
    // A lock that expired at the end is fine only after a release that failed (its outcome unknown).
    if (uncertain && s.actual.startsWith('expired')) continue;
    wrong.push(`end state: ${s.what}: expected ${s.expected}, got ${s.actual}`);
  }
  const tokens = new Map<bigint, string>();
  for (const s of sections) {
    if (s.token === undefined) continue;
    const other = tokens.get(s.token);
    if (other !== undefined) wrong.push(`fencing token ${s.token} given to both ${other} and ${s.cs}`);
    tokens.set(s.token, s.cs);
  }
  return wrong;
}

/** The longest wait: from a task's `want` to its `wait-end`. */
function longestWait(t: Timeline, res: string): number {
  const since = new Map<string, number>();
  let longest = 0;
  for (const e of t.events) {
    if (!('res' in e) || e.res !== res || !('task' in e)) continue;
    if (e.kind === 'want') since.set(e.task, e.t);
    if (e.kind !== 'wait-end') continue;
    longest = Math.max(longest, e.t - (since.get(e.task) ?? e.t));
    since.delete(e.task);
  }
  for (const start of since.values()) longest = Math.max(longest, t.runEnd - start);
  return longest;
}

/** Loss signals no fault explains, and losses announced while Redis still listed the owner. */
function falseAlarms(
  t: Timeline,
  res: string,
  lost: readonly Section[],
  expect: Expectations,
  tailMs: number,
): string[] {
  const alarms = lost
    .filter((s) => expect.lossSignals === 'none' || !exposed(s, t.faults, tailMs))
    .map((s) => `${s.cs}: lease signal aborted with no fault that could take the lock`);
  for (const e of t.events) {
    if (e.kind !== 'still-held' || !e.key.includes(`{${res}}`)) continue;
    // Under a fault a renewal Redis ran but the holder never heard of keeps the key alive past
    // what the holder can prove: its loss signal is then honest. Outside every fault it is not.
    const probe = { cs: undefined, worker: e.w, enter: e.t, exit: e.t } as unknown as Section;
    if (expect.lossSignals === 'none' || !exposed(probe, t.faults, tailMs))
      alarms.push(`loss announced while Redis still lists ${e.owner} on ${e.key} (${e.ttl} ms to live)`);
  }
  return alarms;
}

/** Tasks that asked and never got into a section. */
function starved(t: Timeline, res: string, sections: readonly Section[]): string[] {
  const tasks = new Set(t.events.flatMap((e) => (e.kind === 'want' && e.res === res ? [e.task] : [])));
  for (const s of sections) tasks.delete(s.task);
  return [...tasks];
}

/** Measures one resource against the scenario's expectations. */
export function figuresOf(t: Timeline, spec: ResourceSpec, expect: Expectations, leaseMs: number): Figures {
  const sections = t.sections.filter((s) => s.res === spec.name);
  const tailMs = leaseMs;
  const permits = spec.primitive === 'semaphore' ? (spec.permits ?? 1) : undefined;
  const o = overlaps(sections, permits);
  const tolerance = expect.believedToleranceMs ?? Number.POSITIVE_INFINITY;
  const over = o.pairs.filter((p) => p.ms > tolerance);
  const acceptedPairs = o.pairs.filter((p) => p.accepted);
  const writes = sections.filter((s) => s.mode === 'write' && s.wrote).length;
  const counted = spec.primitive !== 'semaphore';
  const { errors, wrong, allowedCount } = errorsOf(t, spec.name, sections, expect, tailMs);
  const uncertain = allowedCount > 0 || errors.length > 0 || sections.some((s) => s.release?.error !== undefined);
  const lost = sections.filter((s) => s.lostAt !== undefined);
  const lastFault = t.faults.reduce((max, f) => Math.max(max, f.end), Number.NEGATIVE_INFINITY);
  return {
    res: spec.name,
    primitive: spec.primitive,
    permits,
    sections: sections.length,
    abandoned: sections.filter((s) => s.abandon !== undefined).length,
    believed: permits === undefined ? o.pairs.length : o.overPermits,
    believedOverTolerance: permits === undefined ? over.length : o.overPermits,
    believedMaxMs: o.pairs.reduce((max, p) => Math.max(max, p.ms), 0),
    accepted: acceptedPairs.length,
    lostUpdates: counted ? writes - (t.finalValue.get(spec.name) ?? 0) : undefined,
    maxConcurrent: o.maxConcurrent,
    overPermits: o.overPermits,
    errors,
    allowedErrors: allowedCount,
    lossSignals: lost.length,
    spurious: falseAlarms(t, spec.name, lost, expect, tailMs),
    detection: detection(sections, t.faults, expect.detectWithinMs),
    wrong: [...wrong, ...wrongResults(t, spec.name, sections, tailMs, uncertain)],
    starved: starved(t, spec.name, sections),
    afterFaults: sections.filter((s) => s.enter > lastFault).length,
    maxWaitMs: longestWait(t, spec.name),
    overTolerance: over,
    acceptedPairs,
  };
}
