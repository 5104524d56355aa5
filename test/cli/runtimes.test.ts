import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { eventually } from '../../harness/eventually.js';
import { startServer, type TestServer } from '../../harness/server.js';
import { portOpen, processesTagged, runDemo, selling, stopIfRunning } from './demo-process.js';
import type { Runtime } from './run-cli.js';

// The README's quick start and the demo under Bun and Deno (the `bun` and `deno` npm packages),
// as their users run them: the quick start from its file, the demo from the build.
const root = fileURLToPath(new URL('../..', import.meta.url));
const SMALL = ['--workers', '2', '--products', '2', '--stock', '10', '--seconds', '20'];
const ENDLESS = ['--workers', '2', '--products', '2', '--stock', '100000', '--seconds', '60'];

let server: TestServer;
before(async () => {
  server = await startServer();
});

function runFile(runtime: 'bun' | 'deno', file: string): Promise<{ code: number | null; output: string }> {
  const args = runtime === 'deno' ? ['run', '-A', file] : [file];
  const child = spawn(`${root}/node_modules/.bin/${runtime}`, args, {
    cwd: root,
    env: { ...process.env, REDIS_URL: server.url },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, output })));
}

for (const runtime of ['bun', 'deno'] as const) {
  describe(`under ${runtime}`, () => {
    it("runs the README's quick start", async () => {
      const { code, output } = await runFile(runtime, 'examples/quick-start.ts');
      assert.equal(code, 0, output);
      assert.match(output, /charged 99\.5 for order:42/);
    });

    it('runs the demo to its summary, then exits and stops its server', async () => {
      const { code, stdout, stderr } = await runDemo(SMALL, {}, runtime).output();
      assert.equal(code, 0, stdout + stderr);
      assert.match(stdout, /verdict\s+OK/);
      const port = Number(/private redis-server on port (\d+)/.exec(stdout)?.[1]);
      assert.equal(await portOpen(port), false, 'the private server was stopped');
    });

    for (const [signal, code] of [
      ['SIGINT', 130],
      ['SIGTERM', 143],
    ] as const) {
      it(`${signal} stops the demo, its workers and its server`, async () => {
        await signalled(runtime, signal, code);
      });
    }
  });
}

/** Sends `signal` to the demo's process group while it sells: it must end with `code`, leaving nothing. */
async function signalled(runtime: Runtime, signal: NodeJS.Signals, code: number): Promise<void> {
  const child = runDemo(ENDLESS, {}, runtime);
  after(() => stopIfRunning(child));
  const port = await selling(child);
  await eventually(() => processesTagged(child.tag).length >= 3, 10_000, 'every worker started');
  process.kill(-child.pid!, signal);
  const result = await child.output();
  assert.equal(result.code, code, result.stdout + result.stderr);
  assert.equal(await portOpen(port), false, 'the private server was stopped');
  await eventually(() => processesTagged(child.tag).length === 0, 5_000, 'no worker left behind');
}

describe('a demo killed with SIGKILL leaves nothing behind', () => {
  for (const runtime of ['node', 'bun', 'deno'] as const) {
    it(`under ${runtime}: its server and workers stop within seconds`, async () => {
      const child = runDemo(ENDLESS, {}, runtime);
      after(() => stopIfRunning(child));
      const port = await selling(child);
      process.kill(child.pid!, 'SIGKILL'); // the demo alone: nothing of it runs again
      await child.output();
      // The server's sidecar sees the demo's pipe close; the workers see their parent gone.
      await eventually(async () => !(await portOpen(port)), 5_000, 'the private server stopped');
      await eventually(() => processesTagged(child.tag).length === 0, 5_000, 'no worker left behind');
    });
  }
});
