import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { startCluster } from '../harness/cluster.js';
import { startSentinel } from '../harness/sentinel.js';
import { assertNoKeyWithoutTtl } from '../harness/keys.js';
import { startServer, type TestServer } from '../harness/server.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const examples = readdirSync(`${root}examples`)
  .filter((file) => file.endsWith('.ts'))
  .sort();
/** A README snippet that IS an example file: `<!-- example: examples/x.ts -->` before a ```ts block. */
const SNIPPET = /<!-- example: (examples\/[\w.-]+\.ts) -->\n```ts\n([\s\S]*?)```\n/g;

let server: TestServer;
let env: NodeJS.ProcessEnv;

before(async () => {
  // Examples import 'latchkey' as users do: Node resolves the package's own name to its build (dist/).
  const [standalone, cluster, sentinel] = await Promise.all([startServer(), startCluster(), startSentinel()]);
  server = standalone;
  env = {
    ...process.env,
    REDIS_URL: server.url,
    REDIS_CLUSTER: cluster.nodes.map((node) => node.url).join(','),
    REDIS_SENTINELS: `${sentinel.sentinel.host}:${sentinel.sentinel.port}`,
    REDIS_SENTINEL_NAME: sentinel.name,
  };
});

function run(file: string): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', `${root}examples/${file}`], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, output })));
}

describe('README snippets are the example files', () => {
  const readme = readFileSync(`${root}README.md`, 'utf8');
  const quoted = [...readme.matchAll(SNIPPET)];

  // Only read: `node scripts/readme-examples.mjs` copies the files into the README, by hand.
  it('each snippet marked as an example matches its file verbatim', () => {
    assert.ok(quoted.length >= 4, 'the README quotes its examples');
    for (const [, file, block] of quoted) {
      assert.equal(
        block,
        readFileSync(`${root}${file!}`, 'utf8'),
        `README's copy of ${file} differs from the file (node scripts/readme-examples.mjs copies it)`,
      );
    }
  });

  it('every example is quoted or named by the README', () => {
    for (const file of examples)
      assert.ok(readme.includes(`examples/${file}`), `README never mentions examples/${file}`);
  });
});

describe('examples/ run against real servers (standalone, Cluster, Sentinel)', () => {
  it('there are examples', () => assert.ok(examples.length >= 4));
  for (const file of examples) {
    it(file, async () => {
      const { code, output } = await run(file);
      assert.equal(code, 0, output);
    });
  }
  it('leave no latchkey key without a TTL, except documented data keys', async () => {
    await assertNoKeyWithoutTtl(server.client(), [/:permits$/, /:count$/, /:total$/, /^latchkey:fence:\{\d+\}$/]);
  });
});
