// Runs test files under Bun (the `bun` devDependency), each in a `bun test` process of its own, as
// `node --test` does: Bun's runner shares one module cache across the files of one process, and the
// test helpers keep per-file state (servers to stop after the file). Prints the plain closing line
// "N passed, N failed" and exits non-zero on any failure.
//
//   node scripts/test-bun.mjs [--quick] [files...]
//
// Without files: the adapter conformance suites (every client Bun can load, and Bun's own), and the
// primitives' tests. --quick: the conformance suites only (what `npm test` runs).
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

const args = process.argv.slice(2);
const quick = args.includes('--quick');
const given = args.filter((arg) => !arg.startsWith('--'));
const testsOf = (dir, suffix) =>
  readdirSync(dir)
    .filter((file) => file.endsWith(suffix))
    .sort()
    .map((file) => join(dir, file));
const conformance = [
  ...testsOf('test/bun', '.bun-test.ts'),
  'test/redis/adapters.test.ts',
  'test/redis/client-versions.test.ts',
  'test/redis/glide.test.ts',
];
const files =
  given.length > 0 ? given : quick ? conformance : [...conformance, ...testsOf('test/primitives', '.test.ts')];
const bun = join('node_modules', '.bin', 'bun');

/** Runs one file; resolves with its pass and fail counts (a crash counts as one failure). */
function run(file) {
  return new Promise((resolve) => {
    const child = spawn(bun, ['test', '--timeout', '180000', `./${file}`], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('close', (code) => {
      const count = (word) => Number(new RegExp(`^\\s*(\\d+) ${word}$`, 'm').exec(output)?.[1] ?? 0);
      const passed = count('pass');
      const failed = count('fail') || (code === 0 ? 0 : 1);
      const failures = output.split('\n').filter((line) => line.startsWith('(fail)'));
      console.log(`${failed === 0 ? 'ok    ' : 'FAILED'} ${file}: ${passed} passed, ${failed} failed`);
      if (failed > 0) console.log(failures.length > 0 ? failures.join('\n') : output.slice(-3000));
      resolve({ passed, failed });
    });
  });
}

// Two files at a time: the machine's two cores, and the servers each file starts.
const queue = [...files];
const totals = { passed: 0, failed: 0 };
await Promise.all(
  [0, 1].map(async () => {
    for (let file = queue.shift(); file !== undefined; file = queue.shift()) {
      const { passed, failed } = await run(file);
      totals.passed += passed;
      totals.failed += failed;
    }
  }),
);
console.log(`bun: ${totals.passed} passed, ${totals.failed} failed`);
process.exitCode = totals.failed === 0 ? 0 : 1;
