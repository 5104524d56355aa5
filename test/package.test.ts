import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const require = createRequire(import.meta.url);

describe('the built package (dist/, from `npm run build`)', () => {
  it('exists: npm test builds it first', () => {
    assert.ok(existsSync(`${root}dist/index.mjs`) && existsSync(`${root}dist/index.cjs`));
  });

  it('loads as ESM and as CommonJS, and errors of one copy are instances for the other', async () => {
    const esm = (await import(`${root}dist/index.mjs`)) as typeof import('../src/index.js');
    const cjs = require(`${root}dist/index.cjs`) as typeof import('../src/index.js');
    assert.equal(typeof esm.LockClient, 'function');
    assert.equal(typeof cjs.LockClient, 'function');
    assert.notEqual(esm.LockNotHeldError, cjs.LockNotHeldError, 'two copies of the classes');
    const fromCjs = new cjs.LockNotHeldError('x');
    assert.ok(fromCjs instanceof esm.LockNotHeldError);
    assert.ok(fromCjs instanceof esm.LatchkeyError);
    assert.ok(!(fromCjs instanceof esm.LockLostError));
    assert.ok(new esm.RedisUnavailableError('y') instanceof cjs.RedisUnavailableError);
    assert.equal(fromCjs.code, 'LATCHKEY_LOCK_NOT_HELD');
    // A lost lock is a lock not held: code that catches LockNotHeldError catches it, in either copy.
    const lost = new cjs.LockLostError('z');
    assert.ok(
      lost instanceof esm.LockLostError && lost instanceof esm.LockNotHeldError && lost instanceof esm.LatchkeyError,
    );
    assert.ok(lost instanceof cjs.LockNotHeldError);
    assert.equal(lost.code, 'LATCHKEY_LOCK_LOST');
    assert.equal(lost.name, 'LockLostError');
    assert.ok(!(new esm.LockNotHeldError('w') instanceof cjs.LockLostError));
  });

  it('ships type declarations for both formats', () => {
    assert.ok(existsSync(`${root}dist/index.d.mts`) && existsSync(`${root}dist/index.d.cts`));
  });

  it('ships latchkey/otel for both formats', () => {
    for (const file of ['otel.mjs', 'otel.cjs', 'otel.d.mts', 'otel.d.cts'])
      assert.ok(existsSync(`${root}dist/${file}`), file);
  });

  it('the built CLI prints its usage, and loads no optional peer for it', () => {
    const output = execFileSync(process.execPath, [`${root}dist/cli/main.mjs`, '--help'], { encoding: 'utf8' });
    assert.match(output, /latchkey inspect \[PATTERN\]/);
    assert.match(output, /latchkey run --lock NAME/);
  });

  it('the main entry never loads the optional peers (rxjs, @opentelemetry/api)', () => {
    const loaded = execFileSync(
      process.execPath,
      [
        '-e',
        `require(${JSON.stringify(`${root}dist/index.cjs`)}); console.log(Object.keys(require.cache).join('\\n'))`,
      ],
      { encoding: 'utf8' },
    );
    assert.doesNotMatch(loaded, /node_modules\/(rxjs|@opentelemetry)\//);
  });
});
