/**
 * Runs one scenario: servers, workers, faults, the end-state checks, the history.
 */
import { setMaxListeners } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { join } from 'node:path';
import type { WorkerConfig } from '../protocol.js';
import { now, Rng } from '../rng.js';
import type { FaultContext, Scenario } from '../scenarios/types.js';
import { checkEndState, checkStrayKeys } from './end-state.js';
import { Env } from './env.js';
import type { Fleet } from './fleet.js';
import { History } from './history.js';
import { Register } from './register.js';

export interface RunOptions {
  readonly quick: boolean;
  readonly seed: number;
  readonly outDir: string;
  /** Aborted on Ctrl-C: faults wind down at once. */
  readonly signal: AbortSignal;
  /** A soak: workers and servers are sampled this often (see WorkerStats). */
  readonly statsEveryMs?: number;
}

export interface ScenarioRun {
  readonly history: History;
  readonly wallMs: number;
  /** Workers that did not finish their tasks when told to stop (they hung). */
  readonly stuck: readonly number[];
  /** A failure of the harness itself (a server that did not start, a fault that threw). */
  readonly harnessError?: string;
}

/** Default lease of a scenario that sets none: the client's own default. */
export const leaseOf = (scenario: Scenario): number => scenario.client.watchdogTimeout ?? 30_000;

function workerConfigs(scenario: Scenario, env: Env, options: RunOptions): WorkerConfig[] {
  return Array.from({ length: scenario.workers }, (_, worker) => ({
    worker,
    seed: options.seed,
    servers: env.serversFor(worker),
    client: scenario.client,
    resources: scenario.resources,
    ...(options.statsEveryMs === undefined ? {} : { statsEveryMs: options.statsEveryMs }),
  }));
}

/** A soak's samples of the servers: memory used and keys, summed over the live ones. */
function sampleServers(env: Env, history: History, everyMs: number): () => void {
  const timer = setInterval(() => {
    const live = env.servers.filter((server) => !server.dead);
    void Promise.all(
      live.map(async ({ admin }) => {
        const memory = /used_memory:(\d+)/.exec(await admin.info('memory'))?.[1];
        return { usedMemory: Number(memory ?? 0), keys: await admin.dbsize() };
      }),
    ).then(
      (samples) => {
        const sum = (pick: (s: { usedMemory: number; keys: number }) => number): number =>
          samples.reduce((total, sample) => total + pick(sample), 0);
        history.add({ t: now(), ev: 'redis-stats', usedMemory: sum((s) => s.usedMemory), keys: sum((s) => s.keys) });
      },
      () => undefined,
    );
  }, everyMs);
  return () => clearInterval(timer);
}

function faultContext(
  parts: Omit<FaultContext, keyof FaultMethods>,
  history: History,
  end: number,
  options: RunOptions,
): FaultContext {
  const running = (): boolean => now() < end && !options.signal.aborted;
  // Fault loops race many sleeps against one signal; each sleep's listener goes when it ends.
  setMaxListeners(1_000, options.signal);
  const wait = (ms: number): Promise<void> =>
    sleep(Math.max(0, ms), undefined, { signal: options.signal }).catch(() => undefined);
  return {
    ...parts,
    running,
    remaining: () => Math.max(0, end - now()),
    sleep: wait,
    async until(pick, ms = Number.POSITIVE_INFINITY) {
      const give = now() + ms;
      while (running() && now() < give) {
        const found = pick();
        if (found !== undefined) return found;
        await wait(5);
      }
      return undefined;
    },
    fault: (record) => history.add({ t: now(), ev: 'fault', ...record }),
  };
}

type FaultMethods = Pick<FaultContext, 'running' | 'remaining' | 'sleep' | 'until' | 'fault'>;

/** Semaphores get their permits before any worker starts. */
async function prepare(scenario: Scenario, env: Env): Promise<void> {
  for (const res of scenario.resources) {
    if (res.primitive !== 'semaphore') continue;
    await env.servers[0]?.locks.getSemaphore(res.name).trySetPermits(res.permits ?? 1);
  }
}

/** Where a scenario's run stands, for the cleanup after a failure. */
interface RunState {
  /** The workers have a session of this scenario that was not ended yet. */
  begun: boolean;
  stuck: number[];
}

/** Workers for the scenario's duration with its faults, then stop, end-state checks, shutdown. */
async function runWorkers(
  scenario: Scenario,
  options: RunOptions,
  fleet: Fleet,
  env: Env,
  history: History,
  state: RunState,
): Promise<void> {
  const note = (text: string): void => history.add({ t: now(), ev: 'note', text });
  const lease = leaseOf(scenario);
  const register = new Register(history);
  state.begun = true;
  await fleet.begin(
    workerConfigs(scenario, env, options),
    register,
    history,
    join(options.outDir, `${scenario.name}.workers.log`),
  );
  note('workers ready');
  const duration = options.quick ? scenario.durationMs.quick : scenario.durationMs.full;
  const rng = new Rng(options.seed).fork(hash(scenario.name));
  const ctx = faultContext(
    { env, fleet, register, rng, lease, quick: options.quick },
    history,
    now() + duration,
    options,
  );
  fleet.start();
  const stopSampling =
    options.statsEveryMs === undefined ? () => undefined : sampleServers(env, history, options.statsEveryMs);
  try {
    await Promise.all([ctx.sleep(duration), scenario.faults?.(ctx)]);
  } finally {
    stopSampling();
    env.heal();
  }
  note('stopping');
  state.stuck = await fleet.stop(Math.max(10_000, lease * 2));
  note('drained');
  if (state.stuck.length === 0) await checkEndState(scenario.resources, env, history, lease);
  await fleet.end((scenario.client.commandTimeout ?? 10_000) + 5_000);
  state.begun = false;
  note('workers closed');
  await checkStrayKeys(env, history);
}

/**
 * Runs one scenario end to end: servers (and proxies), workers, the fault schedule for the
 * scenario's duration, then stop, end-state checks, shutdown and the stray-key check. Everything
 * it started is stopped before it returns, whatever happened.
 */
export async function runScenario(scenario: Scenario, options: RunOptions, fleet: Fleet): Promise<ScenarioRun> {
  const started = now();
  const history = new History(join(options.outDir, `${scenario.name}.jsonl`));
  history.add({ t: started, ev: 'scenario', name: scenario.name, seed: options.seed, spec: specOf(scenario, options) });
  const state: RunState = { begun: false, stuck: [] };
  let env: Env | undefined;
  let harnessError: string | undefined;
  try {
    env = await Env.start(scenario.servers, scenario.workers, scenario.proxied);
    await prepare(scenario, env);
    history.add({ t: now(), ev: 'note', text: 'servers ready' });
    await runWorkers(scenario, options, fleet, env, history, state);
  } catch (error) {
    harnessError = error instanceof Error ? (error.stack ?? error.message) : String(error);
    history.add({ t: now(), ev: 'note', text: `harness error: ${harnessError}` });
  } finally {
    // After a failure the workers may be mid-scenario: end their session (replacing any that hang).
    if (state.begun) await fleet.end(5_000);
    await env?.stop();
    await history.close();
  }
  return { history, wallMs: now() - started, stuck: state.stuck, harnessError };
}

/** What the checker needs to judge a history again later (`--check`). */
export function specOf(scenario: Scenario, options: Pick<RunOptions, 'quick'>): unknown {
  const { name, title, control, servers, workers, client, resources, expect } = scenario;
  const faulty = scenario.faults !== undefined;
  return {
    name,
    title,
    control: control ?? false,
    faulty,
    servers,
    workers,
    client,
    resources,
    expect,
    quick: options.quick,
  };
}

function hash(text: string): number {
  let h = 2_166_136_261;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16_777_619);
  return h >>> 0;
}
