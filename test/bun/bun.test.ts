import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';

// The adapter conformance suites under Bun (the `bun` npm package's runtime), from `npm test`: each
// file in a `bun test` process of its own (scripts/test-bun.mjs runs them, and the primitives'
// tests, as `npm run test:bun`). Bun's RedisClient exists only there: test/bun/*.bun-test.ts.
const root = fileURLToPath(new URL('../..', import.meta.url));
const FILES = [
  'test/bun/bun-client.bun-test.ts',
  'test/redis/adapters.test.ts',
  'test/redis/client-versions.test.ts',
  'test/redis/glide.test.ts',
];

function bunTest(file: string): Promise<{ code: number | null; output: string }> {
  const child = spawn(`${root}/node_modules/.bin/bun`, ['test', '--timeout', '120000', `./${file}`], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, output })));
}

describe('under Bun: the adapter conformance suites', () => {
  for (const file of FILES) {
    it(file, async () => {
      const { code, output } = await bunTest(file);
      const failures = output.split('\n').filter((line) => line.startsWith('(fail)'));
      assert.equal(code, 0, failures.length > 0 ? failures.join('\n') : output.slice(-3_000));
      const passed = Number(/^\s*(\d+) pass$/m.exec(output)?.[1]);
      assert.ok(passed > 0, `no test ran: ${output.slice(-1_000)}`);
    });
  }
});
