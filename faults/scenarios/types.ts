/**
 * What a scenario is: its workers, resources, faults and the expectations its figures must meet.
 */
import type { ClientOptions, HistoryRecord, ResourceSpec } from '../protocol.js';
import type { Rng } from '../rng.js';
import type { Env } from '../runner/env.js';
import type { Fleet } from '../runner/fleet.js';
import type { Register } from '../runner/register.js';

/** A fault as a scenario reports it (the runner stamps the time). */
export type FaultRecord = Omit<Extract<HistoryRecord, { ev: 'fault' }>, 't' | 'ev'>;

/** What a scenario requires of its figures; anything not required is reported as information. */
export interface Expectations {
  /**
   * Overlaps in time of two holders' sections (what they believed) longer than this many ms fail
   * the scenario; left out, they are information (a holder stalled past its lease cannot know).
   * 0 where nothing can excuse one; a few ms where a lease ends by the clock, for timer lag.
   */
  readonly believedToleranceMs?: number;
  /** Overlapping sections that both acted on the register (both writes accepted). */
  readonly acceptedOverlaps: 'zero' | 'info';
  /** Increments lost by read-sleep-write races (accepted writes minus the final count). */
  readonly lostUpdates: 'zero' | 'info';
  /**
   * `none`: every loss signal is a false alarm (nothing in the scenario can lose a lock).
   * `exposed`: only a signal outside every lock-losing fault's reach is.
   * Either way a signal while Redis verifiably still lists the owner is one.
   */
  readonly lossSignals: 'none' | 'exposed';
  /** Error names or codes the faults may legitimately cause (reported, not failed). */
  readonly allowedErrors: readonly string[];
  /** Holds a fault took away must be detected by their lease signal within this many ms. */
  readonly detectWithinMs?: number;
  /** Every task must get into its critical section at least once (nobody stranded). */
  readonly everyTaskEnters: boolean;
  /** Sections must still be entered after the last fault (the primitive recovered). */
  readonly recovers: boolean;
}

export interface Scenario {
  readonly name: string;
  /** One line: primitive and fault. */
  readonly title: string;
  /** Part of `--quick`. */
  readonly quick: boolean;
  /** A control: it must FAIL (it proves the checker sees what it is meant to see). */
  readonly control?: boolean;
  readonly servers: number;
  /** One TCP proxy per worker and server, for network faults. */
  readonly proxied: boolean;
  readonly workers: number;
  readonly client: ClientOptions;
  readonly resources: readonly ResourceSpec[];
  readonly durationMs: { readonly quick: number; readonly full: number };
  readonly expect: Expectations;
  /** Injects the faults while the workers run; must return soon after `ctx.running()` turns false. */
  readonly faults?: (ctx: FaultContext) => Promise<void>;
}

export interface FaultContext {
  readonly env: Env;
  readonly fleet: Fleet;
  readonly register: Register;
  readonly rng: Rng;
  /** The scenario's lease: the client's watchdogTimeout. */
  readonly lease: number;
  readonly quick: boolean;
  /** True until the scenario's time is up. */
  running(): boolean;
  /** Ms left in the scenario. */
  remaining(): number;
  sleep(ms: number): Promise<void>;
  /** Polls `pick` every few ms until it returns something; undefined when `ms` or the scenario ran out. */
  until<T>(pick: () => T | undefined, ms?: number): Promise<T | undefined>;
  /** Records a fault in the history (see the `fault` record in protocol.ts). */
  fault(record: FaultRecord): void;
}

/** The defaults of a scenario without faults: everything required. */
export const STRICT: Expectations = Object.freeze({
  believedToleranceMs: 0,
  acceptedOverlaps: 'zero',
  lostUpdates: 'zero',
  lossSignals: 'none',
  allowedErrors: [],
  everyTaskEnters: true,
  recovers: false,
});
