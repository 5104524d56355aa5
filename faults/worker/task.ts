/**
 * One worker task: wait for the primitive, run the protected work, report every step.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Mode, ResourceSpec } from '../protocol.js';
import type { Rng } from '../rng.js';
import type { Grant, Guard, GuardReport } from './guards.js';
import { errorInfo, type RunnerLink } from './link.js';

/** The reason the runner's stop aborts waits with: a wait ended this way is not a failure. */
export const STOP = new Error('the runner stopped the scenario');

export interface Task {
  /** `w<worker>.<resource>.<index>`: unique in the run. */
  readonly id: string;
  readonly res: ResourceSpec;
  readonly mode: Mode;
  readonly guard: Guard;
  readonly rng: Rng;
  readonly link: RunnerLink;
}

/** Resolves true when `signal` aborts within `ms`, false when the time passed first. */
function holdFor(ms: number, signal: AbortSignal | undefined): Promise<boolean> {
  if (signal?.aborted) return Promise.resolve(true);
  return new Promise((resolve) => {
    const onAbort = (): void => {
      clearTimeout(timer);
      resolve(true);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve(false);
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * The protected work: read the register's counter, work a while, write what was read plus one.
 * A section whose lease signal aborts stops at once without writing, as a careful user's code
 * would; one whose token the register refuses stops too (the resource said no).
 */
async function criticalSection(task: Task, cs: string, grant: Grant): Promise<void> {
  const { link, res, mode } = task;
  if (grant.signal?.aborted) {
    link.event({ kind: 'stale-grant', res: res.name, task: task.id, cs });
    return;
  }
  const token = grant.token?.toString();
  const entered = await link.call({ op: 'enter', res: res.name, task: task.id, cs, mode, ...(token ? { token } : {}) });
  if (!entered.accepted) {
    await link.call({ op: 'exit', res: res.name, cs, abandon: 'token refused' });
    return;
  }
  if (await holdFor(task.rng.between(res.holdMs), grant.signal)) {
    await link.call({ op: 'exit', res: res.name, cs, abandon: 'lease signal aborted' });
    return;
  }
  await link.call({ op: 'exit', res: res.name, cs, ...(mode === 'write' ? { write: entered.value + 1 } : {}) });
}

/** One round: ask, work, give back. Reports everything it sees; never rejects. */
async function round(task: Task, cs: string, stop: AbortSignal): Promise<void> {
  const { link } = task;
  const res = task.res.name;
  link.event({ kind: 'want', res, task: task.id });
  let entered = false;
  let watched: AbortSignal | undefined;
  const onLost = (): void =>
    link.event({ kind: 'lost', res, task: task.id, cs, reason: errorInfo(watched?.reason).message });
  const report: GuardReport = {
    released: (error) =>
      link.event({ kind: 'released', res, task: task.id, cs, ...(error ? { error: errorInfo(error) } : {}) }),
    wrong: (what, expected, actual) => link.event({ kind: 'wrong', res, task: task.id, cs, what, expected, actual }),
  };
  // A task that gives up (abortWaitMs) aborts its wait, maybe while an attempt is in flight.
  const range = task.res.abortWaitMs;
  const abortAfter = range && task.rng.next() < (task.res.abortShare ?? 1) ? task.rng.between(range) : undefined;
  const wait = abortAfter === undefined ? stop : AbortSignal.any([stop, AbortSignal.timeout(abortAfter)]);
  try {
    const done = await task.guard(
      async (grant) => {
        entered = true;
        link.event({ kind: 'wait-end', res, task: task.id, outcome: 'acquired' });
        // Watched until the release ends: a loss signal during the release is one too.
        watched = grant.signal;
        if (watched && !watched.aborted) watched.addEventListener('abort', onLost, { once: true });
        await criticalSection(task, cs, grant);
      },
      wait,
      report,
    );
    if (!done) link.event({ kind: 'wait-end', res, task: task.id, outcome: 'timeout' });
  } catch (error) {
    const stopped = error === STOP;
    const aborted = !entered && !stopped && wait !== stop && error === wait.reason;
    if (aborted) {
      link.event({ kind: 'wait-end', res, task: task.id, outcome: 'aborted' });
      return;
    }
    if (!entered) link.event({ kind: 'wait-end', res, task: task.id, outcome: stopped ? 'stopped' : 'error' });
    if (!stopped)
      link.event({ kind: 'error', res, task: task.id, cs, op: entered ? 'guard' : 'take', error: errorInfo(error) });
  } finally {
    watched?.removeEventListener('abort', onLost);
  }
}

/** Runs rounds until `stop` aborts. */
export async function runTask(task: Task, stop: AbortSignal): Promise<void> {
  for (let n = 0; !stop.aborted; n++) {
    await round(task, `${task.id}.${n}`, stop);
    const think = task.rng.between(task.res.thinkMs);
    if (think > 0) await sleep(think, undefined, { signal: stop }).catch(() => undefined);
    // Let other tasks of this process run between rounds even when nothing here waits on I/O.
    else await new Promise((resolve) => setImmediate(resolve));
  }
}
