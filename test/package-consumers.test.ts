import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { startServer, type TestServer } from '../harness/server.js';

/**
 * The packed tarball, installed as a user installs it into fresh projects of each kind users
 * have, type-checked strictly and run against a private server. One install serves every
 * project (each is a folder under it with its own package.json and tsconfig).
 */
const root = fileURLToPath(new URL('..', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'latchkey-consumers-'));
let server: TestServer;
let tarball: { filename: string; files: { path: string }[] };

interface Result {
  code: number | null;
  stdout: string;
  output: string;
}
function run(file: string, args: readonly string[], cwd = dir, env: NodeJS.ProcessEnv = {}): Promise<Result> {
  return new Promise((resolve) => {
    execFile(file, args, { cwd, env: { ...process.env, ...env }, timeout: 120_000 }, (error, stdout, stderr) =>
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, output: `${stdout}${stderr}` }),
    );
  });
}

const STRICT = { strict: true, skipLibCheck: false, target: 'es2022', types: ['node'], outDir: 'out' };
const IMPORTS = `import { LockClient, LockNotHeldError, type Lock } from 'latchkey';
import { toRx } from 'latchkey/rx';
import { instrumentLatchkey, type LatchkeyInstrumentation } from 'latchkey/otel';
export const used: unknown[] = [LockClient, new LockNotHeldError('x').code, toRx, instrumentLatchkey];
export type Used = [Lock, LatchkeyInstrumentation];
`;
const CJS_MAIN = `import { Redis } from 'ioredis';
import { LockClient } from 'latchkey';
import { toRx } from 'latchkey/rx';
import { lastValueFrom } from 'rxjs';
async function main(): Promise<void> {
  const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
  const locks = new LockClient(redis);
  const total = await locks.getLock('order:42').withLock(async () => 99.5);
  const viaRx = await lastValueFrom(toRx(locks.getLock('order:43')).tryLock());
  console.log(\`cjs charged \${total}, rx \${viaRx}\`);
  await locks.shutdown();
  redis.disconnect();
}
void main();
`;
const JS_MAIN = `const { Redis } = require('ioredis');
const { LockClient, LockNotHeldError } = require('latchkey');
const { toRx } = require('latchkey/rx');
const { instrumentLatchkey } = require('latchkey/otel');
(async () => {
  const redis = new Redis(process.env.REDIS_URL);
  const locks = new LockClient(redis);
  const lock = locks.getLock('order:44');
  await lock.lock();
  await lock.unlock();
  const refused = await lock.unlock().catch((error) => error instanceof LockNotHeldError);
  console.log('js', refused, typeof toRx, typeof instrumentLatchkey);
  await locks.shutdown();
  redis.disconnect();
})();
`;

/** Every project: its package.json type, compiler options (none: plain JS) and files. */
const PROJECTS: Record<string, { type: string; tsconfig?: object; files: Record<string, string> }> = {
  'esm-nodenext': {
    type: 'module',
    tsconfig: { ...STRICT, module: 'nodenext', noUncheckedIndexedAccess: true, exactOptionalPropertyTypes: true },
    files: { 'imports.ts': IMPORTS, 'quick-start.ts': readFileSync(`${root}examples/quick-start.ts`, 'utf8') },
  },
  'esm-bundler': {
    type: 'module',
    // Declarations are checked in full by the two projects that run; these two check resolution.
    tsconfig: { ...STRICT, module: 'preserve', moduleResolution: 'bundler', noEmit: true, skipLibCheck: true },
    files: { 'imports.ts': IMPORTS, 'quick-start.ts': readFileSync(`${root}examples/quick-start.ts`, 'utf8') },
  },
  'cjs-node10': {
    type: 'commonjs',
    tsconfig: { ...STRICT, module: 'commonjs', moduleResolution: 'node10', esModuleInterop: false },
    files: { 'imports.ts': IMPORTS, 'main.ts': CJS_MAIN },
  },
  'cjs-node16': {
    type: 'commonjs',
    tsconfig: { ...STRICT, module: 'node16', esModuleInterop: false, noEmit: true, skipLibCheck: true },
    files: { 'imports.ts': IMPORTS, 'main.ts': CJS_MAIN },
  },
  'cjs-js': { type: 'commonjs', files: { 'index.js': JS_MAIN } },
};

const typechecks = new Map<string, Promise<Result>>();

before(async () => {
  server = await startServer();
  // --ignore-scripts: `npm test` built dist/ already; a second build here would race other test files.
  const packed = await run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', dir], root);
  assert.equal(packed.code, 0, packed.output);
  tarball = (JSON.parse(packed.stdout) as (typeof tarball)[])[0]!;
  const dependencies = {
    latchkey: `file:./${tarball.filename}`,
    ioredis: '^5.11.1',
    rxjs: '^7.8.2',
    '@opentelemetry/api': '~1.9.0',
    typescript: '~5.9.3',
    '@types/node': '^20.19.0',
  };
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ private: true, dependencies }));
  const installed = await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error']);
  assert.equal(installed.code, 0, installed.output);
  for (const [name, project] of Object.entries(PROJECTS)) {
    const folder = join(dir, name);
    mkdirSync(folder);
    writeFileSync(join(folder, 'package.json'), JSON.stringify({ type: project.type }));
    for (const [file, text] of Object.entries(project.files)) writeFileSync(join(folder, file), text);
    if (!project.tsconfig) continue;
    writeFileSync(join(folder, 'tsconfig.json'), JSON.stringify({ compilerOptions: project.tsconfig }));
    typechecks.set(name, run(process.execPath, [join(dir, 'node_modules/typescript/bin/tsc'), '-p', folder]));
  }
});
after(() => rmSync(dir, { recursive: true, force: true }));

const runNode = (file: string): Promise<Result> =>
  run(process.execPath, [join(dir, file)], dir, { REDIS_URL: server.url });

describe('the packed tarball in fresh consumer projects', () => {
  it('holds the build, the CLI and the README, and nothing else', () => {
    const paths = tarball.files.map((file) => file.path);
    for (const needed of ['dist/index.mjs', 'dist/index.cjs', 'dist/index.d.mts', 'dist/index.d.cts', 'dist/rx.d.cts'])
      assert.ok(paths.includes(needed), needed);
    for (const needed of ['dist/otel.mjs', 'dist/otel.cjs', 'dist/otel.d.cts', 'dist/cli/main.mjs', 'README.md'])
      assert.ok(paths.includes(needed), needed);
    const stray = paths.filter(
      (path) => !/^(dist\/|README\.md$|package\.json$|LICENSE)/.test(path) || path.endsWith('.map'),
    );
    assert.deepEqual(stray, []);
    const pkg = JSON.parse(readFileSync(`${root}package.json`, 'utf8')) as { scripts: Record<string, string> };
    assert.match(pkg.scripts.prepack ?? '', /build/, 'npm pack / publish build dist first');
  });

  it('ESM TypeScript (nodenext): type-checks strictly and runs the README quick start as written', async () => {
    const checked = await typechecks.get('esm-nodenext')!;
    assert.equal(checked.code, 0, checked.output);
    const { code, output } = await runNode('esm-nodenext/out/quick-start.js');
    assert.equal(code, 0, output);
    assert.match(output, /charged 99\.5 for order:42/);
  });

  it('ESM TypeScript (bundler resolution): type-checks strictly', async () => {
    const checked = await typechecks.get('esm-bundler')!;
    assert.equal(checked.code, 0, checked.output);
  });

  it('CommonJS TypeScript without esModuleInterop (node10 and node16 resolution): type-checks and runs', async () => {
    for (const name of ['cjs-node10', 'cjs-node16']) {
      const checked = await typechecks.get(name)!;
      assert.equal(checked.code, 0, `${name}: ${checked.output}`);
    }
    const { code, output } = await runNode('cjs-node10/out/main.js');
    assert.equal(code, 0, output);
    assert.match(output, /cjs charged 99\.5, rx true/);
  });

  it('plain CommonJS JavaScript: require() of every entry', async () => {
    const { code, output } = await runNode('cjs-js/index.js');
    assert.equal(code, 0, output);
    assert.match(output, /js true function function/);
  });

  it('npx latchkey: the installed bin answers --version and inspects a server', async () => {
    const bin = join(dir, 'node_modules/.bin/latchkey');
    const version = await run(bin, ['--version']);
    assert.equal(
      version.output.trim(),
      (JSON.parse(readFileSync(`${root}package.json`, 'utf8')) as { version: string }).version,
    );
    const inspected = await run(bin, ['inspect', '--json', '--url', server.url]);
    assert.equal(inspected.code, 0, inspected.output);
    assert.equal((JSON.parse(inspected.stdout) as { mode: string }).mode, 'standalone');
  });
});
