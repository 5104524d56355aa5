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

/** Rebuilds sections, faults and the other records from a history, in one pass. */
export function timeline(records: readonly HistoryRecord[]): Timeline {
  const runEnd = records.reduce((max, r) => Math.max(max, r.t), 0);
  const byCs = new Map<string, Section>();
  const sections: Section[] = [];
  const events: EventRecord[] = [];
  const faultRecords: Extract<HistoryRecord, { ev: 'fault' }>[] = [];
  const result = { endStates: [], strayKeys: [], notes: [] } as Pick<Timeline, 'endStates' | 'strayKeys' | 'notes'>;
  const finalValue = new Map<string, number>();
  for (const r of records) {
    switch (r.ev) {
      case 'enter': {
        const token = r.token === undefined ? undefined : BigInt(r.token);
        const section: Section = {
          ...{ cs: r.cs, res: r.res, task: r.task, worker: r.w, mode: r.mode, token, enter: r.t },
          ...{ exit: runEnd, exited: false, readAccepted: r.accepted, readValue: r.value, exitValue: undefined },
          ...{ wrote: false, abandon: undefined, lostAt: undefined, release: undefined },
        };
        byCs.set(r.cs, section);
        sections.push(section);
        finalValue.set(r.res, r.value);
        break;
      }
      case 'exit': {
        const section = byCs.get(r.cs);
        if (section) Object.assign(section, { exit: r.t, exited: true, exitValue: r.value, abandon: r.abandon });
        if (section && r.write !== undefined) section.wrote = r.accepted;
        finalValue.set(r.res, r.value);
        break;
      }
      case 'event': {
        const cs = 'cs' in r ? r.cs : undefined;
        if (!fold(cs === undefined ? undefined : byCs.get(cs), r, r.t)) events.push(r);
        break;
      }
      case 'fault':
        faultRecords.push(r);
        break;
      case 'end-state':
        result.endStates.push(r);
        break;
      case 'stray-key':
        result.strayKeys.push(r);
        break;
      case 'note':
        result.notes.push(r.text);
        break;
      case 'scenario':
        break;
    }
  }
  return { sections, faults: pairFaults(faultRecords, runEnd), events, ...result, finalValue, runEnd };
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
