/**
 * The fault-injection suite: `npm run faults [-- --quick] [--scenario a,b] [--seed n] [--out dir]`,
 * or `--check <history.jsonl>` to judge a stored history again, `--list` to list scenarios.
 * Starts private redis-servers, worker processes and proxies, injects faults, checks the
 * guarantees, prints one table, and exits 0 only when every scenario passed (and every control
 * scenario failed, as it must).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { analyze, type Verdict } from './check/analyze.js';
import { around } from './inspect.js';
import { LEGEND, renderTable } from './report.js';
import { cleanupAll, cleanupOnSignals } from './runner/cleanup.js';
import { Fleet } from './runner/fleet.js';
import { readHistory } from './runner/history.js';
import { runScenario } from './runner/scenario.js';
import { scenarios } from './scenarios/index.js';
import { soakScenario } from './scenarios/soak.js';
import { renderTrends, soakTrends } from './check/soak.js';
import type { Scenario } from './scenarios/types.js';

const USAGE = `usage: npm run faults -- [--quick] [--scenario name[,name...]] [--seed n] [--out dir] [--own-handles]
       npm run faults -- --soak MINUTES [--seed n] [--out dir]
                                                     the no-fault workload of every primitive for
                                                     MINUTES, sampling what must not grow
       --own-handles: no task shares a handle (a diagnosis aid: sets apart the shared-handle owner rule)
       npm run faults -- --check <history.jsonl> [--around <section>]
                                                     judge a stored history again (and show one
                                                     section's neighbourhood, e.g. w0.lock.1.30)
       npm run faults -- --list                      list the scenarios`;

interface Row {
  readonly verdict: Verdict;
  readonly wallMs?: number;
  readonly historyPath?: string;
}

function select(names: string | undefined, quick: boolean): Scenario[] {
  if (names === undefined) return scenarios.filter((s) => !quick || s.quick);
  const wanted = names.split(',').map((n) => n.trim());
  const unknown = wanted.filter((n) => !scenarios.some((s) => s.name === n));
  if (unknown.length > 0) throw new Error(`unknown scenario ${unknown.join(', ')}; --list shows them`);
  return scenarios.filter((s) => wanted.includes(s.name));
}

async function check(path: string, section: string | undefined): Promise<number> {
  const records = await readHistory(path);
  const verdict = analyze(records);
  console.log(renderTable([{ verdict, historyPath: path }]));
  if (section !== undefined) console.log(`\n${around(records, section)}`);
  return verdict.pass ? 0 : 1;
}

async function runAll(selected: readonly Scenario[], quick: boolean, seed: number, outDir: string): Promise<number> {
  mkdirSync(outDir, { recursive: true });
  const stop = new AbortController();
  process.once('SIGINT', () => stop.abort());
  const rows: Row[] = [];
  const started = Date.now();
  console.log(
    `latchkey fault-injection suite: ${selected.length} scenarios, ${quick ? 'quick' : 'full'}, seed ${seed}`,
  );
  console.log(`histories: ${outDir}`);
  const fleet = new Fleet();
  for (const scenario of selected) {
    if (stop.signal.aborted) break;
    const run = await runScenario(scenario, { quick, seed, outDir, signal: stop.signal }, fleet);
    const verdict = analyze(run.history.records, run);
    rows.push({ verdict, wallMs: run.wallMs, historyPath: run.history.path });
    const mark = verdict.control ? (verdict.pass ? 'control ok' : 'CONTROL FAIL') : verdict.pass ? 'pass' : 'FAIL';
    console.log(
      `  ${mark.padEnd(12)} ${scenario.name.padEnd(24)} ${(run.wallMs / 1000).toFixed(1)}s  ${verdict.reasons[0] ?? ''}`,
    );
  }
  await fleet.kill();
  const wall = (Date.now() - started) / 1000;
  console.log(`\n${renderTable(rows)}\n\n${LEGEND}\n`);
  const passed = rows.filter((r) => r.verdict.pass).length;
  console.log(
    `${passed}/${rows.length} scenarios as required, ${wall.toFixed(0)} s. Histories and summary.json in ${outDir}`,
  );
  const summary = rows.map(({ verdict, wallMs, historyPath }) => ({ ...verdict, wallMs, historyPath }));
  writeFileSync(
    join(outDir, 'summary.json'),
    JSON.stringify({ quick, seed, wallSeconds: wall, scenarios: summary }, null, 2),
  );
  return passed === rows.length && rows.length === selected.length ? 0 : 1;
}

/** A soak samples workers and servers this often. */
const SOAK_SAMPLE_MS = 10_000;

/** `--soak MINUTES`: one long no-fault run, judged like any scenario, plus the trends of what it held. */
async function soak(minutes: number, seed: number, outDir: string): Promise<number> {
  mkdirSync(outDir, { recursive: true });
  const stop = new AbortController();
  process.once('SIGINT', () => stop.abort());
  const scenario = soakScenario(minutes);
  console.log(`latchkey soak: ${scenario.title}, seed ${seed}\nhistory: ${outDir}`);
  const fleet = new Fleet();
  const options = { quick: false, seed, outDir, signal: stop.signal, statsEveryMs: SOAK_SAMPLE_MS };
  const run = await runScenario(scenario, options, fleet);
  await fleet.kill();
  const verdict = analyze(run.history.records, run);
  const trends = soakTrends(run.history.records);
  const flat = trends.every((trend) => trend.flat);
  console.log(`\n${renderTable([{ verdict, wallMs: run.wallMs, historyPath: run.history.path }])}\n`);
  console.log(`${renderTrends(trends)}\n`);
  console.log(`${verdict.pass ? 'pass' : 'FAIL'}${verdict.reasons.length ? `: ${verdict.reasons.join('; ')}` : ''}`);
  console.log(flat ? 'every series flat' : 'some series GROW (see above)');
  writeFileSync(join(outDir, 'soak.json'), JSON.stringify({ seed, minutes, verdict, trends }, null, 2));
  return verdict.pass && flat ? 0 : 1;
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      quick: { type: 'boolean', default: false },
      scenario: { type: 'string' },
      seed: { type: 'string' },
      out: { type: 'string' },
      check: { type: 'string' },
      around: { type: 'string' },
      list: { type: 'boolean', default: false },
      soak: { type: 'string' },
      'own-handles': { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) return (console.log(USAGE), 0);
  if (values.list) {
    for (const s of scenarios) console.log(`${s.name.padEnd(24)} ${s.quick ? 'quick' : '     '}  ${s.title}`);
    return 0;
  }
  if (values.check !== undefined) return check(values.check, values.around);
  const seed = values.seed === undefined ? Math.floor(Math.random() * 2 ** 31) : Number(values.seed);
  if (!Number.isSafeInteger(seed)) throw new Error(`--seed must be an integer, got ${values.seed}`);
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const outDir = resolve(values.out ?? join('.tmp', 'faults', stamp));
  if (values.soak !== undefined) {
    const minutes = Number(values.soak);
    if (!(minutes > 0)) throw new Error(`--soak takes a number of minutes, got ${values.soak}`);
    return soak(minutes, seed, outDir);
  }
  let selected = select(values.scenario, values.quick);
  if (values['own-handles'])
    selected = selected.map((s) => ({ ...s, resources: s.resources.map((r) => ({ ...r, shared: 0 })) }));
  return runAll(selected, values.quick, seed, outDir);
}

cleanupOnSignals();
main().then(
  async (code) => {
    await cleanupAll();
    process.exit(code);
  },
  async (error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    await cleanupAll();
    process.exit(2);
  },
);
