import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { assertNoKeyWithoutTtl } from './helpers/leftovers.js';
import { startServer, type TestServer } from './helpers/redis.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const examples = readdirSync(`${root}examples`)
  .filter((file) => file.endsWith('.ts'))
  .sort();
let server: TestServer;

before(async () => {
  // Examples import 'latchkey' as users do: Node resolves the package's own name to its build (dist/).
  server = await startServer();
});

function run(file: string): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', `${root}examples/${file}`], {
    env: { ...process.env, REDIS_URL: server.url },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, output })));
}

describe('examples/ (quoted by the README) run against a real server', () => {
  it('there are examples', () => assert.ok(examples.length >= 2));
  for (const file of examples) {
    it(file, async () => {
      const { code, output } = await run(file);
      assert.equal(code, 0, output);
    });
  }
  it('leave no latchkey key without a TTL, except documented data keys', async () => {
    await assertNoKeyWithoutTtl(server.client(), [/:permits$/, /:count$/, /:token$/, /:fence$/, /:counter$/]);
  });
});
