/**
 * Rebuilds critical sections and faults from a scenario's history.
 */
import type { ErrorInfo, FaultScope, HistoryRecord, Mode, WorkerEvent } from '../protocol.js';

/** One critical section as the history tells it. */
export interface Section {
  readonly cs: string;
  readonly res: string;
  readonly task: string;
  readonly worker: number;
  readonly mode: Mode;
  readonly token: bigint | undefined;
  readonly enter: number;
  /** When the register saw it leave; the end of the run when it never did. */
  exit: number;
  exited: boolean;
  readAccepted: boolean;
  readValue: number;
  exitValue: number | undefined;
  /** A write the register accepted. */
  wrote: boolean;
  abandon: string | undefined;
  /** First loss signal of its hold (also one during the release). */
  lostAt: number | undefined;
  release: { readonly t: number; readonly error?: ErrorInfo } | undefined;
}

export interface Fault {
  readonly kind: string;
  readonly start: number;
  readonly end: number;
  readonly losesLocks: boolean;
  readonly takesHolds: boolean;
  /** How long after its start the holds it takes are gone (a lease: they expire; 0: at once). */
  readonly lostAfterMs: number;
  readonly detect: boolean;
  readonly scope: FaultScope | undefined;
}

type EventRecord = Extract<HistoryRecord, { ev: 'event' }>;

export interface Timeline {
  readonly sections: Section[];
  readonly faults: Fault[];
  /** Worker events other than the ones folded into sections. */
  readonly events: EventRecord[];
  readonly endStates: Extract<HistoryRecord, { ev: 'end-state' }>[];
  readonly strayKeys: Extract<HistoryRecord, { ev: 'stray-key' }>[];
  readonly notes: string[];
  /** Final counter per resource (the register's value after its last call). */
  readonly finalValue: Map<string, number>;
  readonly runEnd: number;
}

/** Pairs fault starts with their ends (same kind and scope, in order); instants start and end at once. */
function pairFaults(records: readonly Extract<HistoryRecord, { ev: 'fault' }>[], runEnd: number): Fault[] {
  const faults: Fault[] = [];
  const open = new Map<string, Extract<HistoryRecord, { ev: 'fault' }>[]>();
  const keyOf = (r: Extract<HistoryRecord, { ev: 'fault' }>): string => `${r.kind}|${JSON.stringify(r.scope ?? {})}`;
  const make = (r: Extract<HistoryRecord, { ev: 'fault' }>, end: number): Fault => ({
    kind: r.kind,
    start: r.t,
    end,
    losesLocks: r.losesLocks,
    takesHolds: r.takesHolds ?? false,
    lostAfterMs: r.lostAfterMs ?? 0,
    detect: r.detect ?? false,
    scope: r.scope,
  });
  for (const r of records) {
    if (r.phase === 'instant') faults.push(make(r, r.t));
    else if (r.phase === 'start') open.set(keyOf(r), [...(open.get(keyOf(r)) ?? []), r]);
    else {
      const started = open.get(keyOf(r))?.shift();
      if (started) faults.push(make(started, r.t));
    }
  }
  for (const left of open.values()) for (const r of left) faults.push(make(r, runEnd));
  return faults.sort((a, b) => a.start - b.start);
}

function fold(section: Section | undefined, event: WorkerEvent & { t?: number }, t: number): boolean {
  if (!section) return false;
  if (event.kind === 'lost') {
    section.lostAt ??= t;
    return true;
  }
  if (event.kind === 'released') {
    section.release = { t, ...(event.error ? { error: event.error } : {}) };
    return true;
  }
  return false;
}

type Enter = Extract<HistoryRecord, { ev: 'enter' }>;
type Exit = Extract<HistoryRecord, { ev: 'exit' }>;

function opened(r: Enter, runEnd: number): Section {
  return {
    ...{ cs: r.cs, res: r.res, task: r.task, worker: r.w, mode: r.mode, enter: r.t },
    ...{ token: r.token === undefined ? undefined : BigInt(r.token), readAccepted: r.accepted, readValue: r.value },
    // Until its exit shows up: open to the end of the run.
    ...{ exit: runEnd, exited: false, exitValue: undefined, wrote: false, abandon: undefined },
    ...{ lostAt: undefined, release: undefined },
  };
}

function closed(section: Section, r: Exit): void {
  Object.assign(section, { exit: r.t, exited: true, exitValue: r.value, abandon: r.abandon });
  if (r.write !== undefined) section.wrote = r.accepted;
}

/** Rebuilds sections, faults and the other records from a history, in one pass. */
export function timeline(records: readonly HistoryRecord[]): Timeline {
  const runEnd = records.reduce((max, r) => Math.max(max, r.t), 0);
  const byCs = new Map<string, Section>();
  const t: Timeline = {
    sections: [],
    faults: [],
    events: [],
    endStates: [],
    strayKeys: [],
    notes: [],
    finalValue: new Map(),
    runEnd,
  };
  const faults: Extract<HistoryRecord, { ev: 'fault' }>[] = [];
  for (const r of records) {
    if (r.ev === 'enter') {
      const section = opened(r, runEnd);
      byCs.set(r.cs, section);
      t.sections.push(section);
    } else if (r.ev === 'exit') {
      const section = byCs.get(r.cs);
      if (section) closed(section, r);
    } else if (r.ev === 'event') {
      const section = 'cs' in r && r.cs !== undefined ? byCs.get(r.cs) : undefined;
      if (!fold(section, r, r.t)) t.events.push(r);
    } else if (r.ev === 'fault') faults.push(r);
    else if (r.ev === 'end-state') t.endStates.push(r);
    else if (r.ev === 'stray-key') t.strayKeys.push(r);
    else if (r.ev === 'note') t.notes.push(r.text);
    // The register's value after its last call on each resource.
    if (r.ev === 'enter' || r.ev === 'exit') t.finalValue.set(r.res, r.value);
  }
  return { ...t, faults: pairFaults(faults, runEnd) };
}

/** Whether a fault could have taken this section's hold: in its scope, and in its window (plus `tailMs`). */
export function exposed(section: Section, faults: readonly Fault[], tailMs: number): boolean {
  const until = section.release?.t ?? section.lostAt ?? section.exit;
  return faults.some(
    (f) =>
      f.losesLocks &&
      inScope(f.scope, section.worker, section.cs) &&
      section.enter <= f.end + tailMs &&
      until >= f.start,
  );
}

export function inScope(scope: FaultScope | undefined, worker: number, cs?: string): boolean {
  if (scope?.cs !== undefined) return scope.cs === cs;
  if (scope?.worker !== undefined) return scope.worker === worker;
  return true;
}
