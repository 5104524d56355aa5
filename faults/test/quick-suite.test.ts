/**
 * Runs the quick fault suite (`npm run faults -- --quick`) as part of npm test.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));

interface SummaryScenario {
  readonly name: string;
  readonly title: string;
  readonly control: boolean;
  readonly pass: boolean;
  readonly reasons: readonly string[];
  readonly historyPath?: string;
}

/** Runs `npm run faults -- --quick` as a child process; resolves with its exit code and output. */
function runQuickSuite(outDir: string): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'faults/run.ts', '--quick', '--out', outDir], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // The runner cleans up its servers and workers on SIGTERM: pass ours on (a test-runner timeout).
  const forward = (): void => void child.kill('SIGTERM');
  process.once('SIGTERM', forward);
  after(() => {
    process.off('SIGTERM', forward);
    if (child.exitCode === null) child.kill('SIGTERM');
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, output })));
}

test('the quick fault-injection suite (npm run faults -- --quick) passes', { timeout: 170_000 }, async (t) => {
  // Beside `npm run faults`' own runs (gitignored): a failure's histories stay there to inspect.
  mkdirSync(join(root, '.tmp', 'faults'), { recursive: true });
  const outDir = mkdtempSync(join(root, '.tmp', 'faults', 'npm-test-'));
  const { code, output } = await runQuickSuite(outDir);
  let scenarios: SummaryScenario[] = [];
  try {
    scenarios = (JSON.parse(readFileSync(join(outDir, 'summary.json'), 'utf8')) as { scenarios: SummaryScenario[] })
      .scenarios;
  } catch {
    // The end of the output first: a crash's stack is there, and a long message gets cut.
    const lines = output.trimEnd().split('\n');
    assert.fail(`the suite wrote no summary (exit ${code}); its last lines:\n${lines.slice(-40).join('\n')}`);
  }
  assert.ok(
    scenarios.some((s) => s.control),
    'the control scenario ran',
  );
  // One subtest per scenario, so a failure names its scenario and why.
  for (const scenario of scenarios) {
    await t.test(`${scenario.name}: ${scenario.title}`, () => {
      const why = [...scenario.reasons, `history: ${scenario.historyPath ?? '?'}`].join('\n  ');
      assert.ok(scenario.pass, `${scenario.control ? 'control did not fail as it must' : 'FAIL'}:\n  ${why}`);
    });
  }
  assert.equal(code, 0, `npm run faults -- --quick exited ${code}:\n${output}`);
  // Histories are kept when something failed, for inspection.
  rmSync(outDir, { recursive: true, force: true });
});
