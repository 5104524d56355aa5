import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { after, describe, it } from 'node:test';
import { freePort } from '../../src/cli/redis-server.js';
import { cli } from './run-cli.js';

const version = (
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
).version;
const noStack = (text: string): void => assert.doesNotMatch(text, /^\s+at /m, 'no stack trace');

describe('latchkey: usage, version and exit codes', () => {
  it('--help, -h and help print the usage and exit 0', async () => {
    for (const flag of ['--help', '-h', 'help']) {
      const { code, stdout } = await cli([flag]);
      assert.equal(code, 0, flag);
      assert.match(stdout, /latchkey inspect \[PATTERN\]/);
      assert.match(stdout, /Exit status/);
    }
    const { code, stdout } = await cli(['inspect', '--help']);
    assert.equal(code, 0);
    assert.match(stdout, /Usage:/);
  });

  it('--version prints the package version and exits 0', async () => {
    const { code, stdout } = await cli(['--version']);
    assert.equal(code, 0);
    assert.equal(stdout.trim(), version);
  });

  it('no command, an unknown command or option, or a missing argument: exit 2, one line', async () => {
    for (const args of [
      [],
      ['frobnicate'],
      ['inspect', '--frob'],
      ['unlock', 'x'],
      ['run', '--lock', 'x'],
      ['bench'],
    ]) {
      const { code, stderr } = await cli(args, { env: { ...process.env, REDIS_URL: '' } });
      assert.equal(code, 2, `${args.join(' ')}: ${stderr}`);
      noStack(stderr);
    }
  });

  it('a bad URL exits 3, an unreachable server 4, each with one line and no stack trace', async () => {
    for (const url of ['http://127.0.0.1:6379', 'not a url', 'redis://127.0.0.1:6379/x']) {
      const { code, stderr } = await cli(['inspect', '--url', url]);
      assert.equal(code, 3, `${url}: ${stderr}`);
      assert.equal(stderr.trim().split('\n').length, 1, stderr);
    }
    const closed = await freePort();
    const refused = await cli(['inspect', '--url', `redis://127.0.0.1:${closed}`]);
    assert.equal(refused.code, 4);
    assert.match(refused.stderr, /^latchkey: cannot reach Redis at 127\.0\.0\.1:\d+: connect ECONNREFUSED/);
    noStack(refused.stderr);
  });

  it('a server that accepts but never answers fails within the --timeout bound, not after retries', async () => {
    const sockets = new Set<Socket>();
    const silent = createServer((socket) => void sockets.add(socket)); // reads nothing, answers nothing
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    after(() => {
      for (const socket of sockets) socket.destroy();
      silent.close();
    });
    const { port } = silent.address() as { port: number };
    const started = Date.now();
    const { code, stderr } = await cli([
      'run',
      '--lock',
      'x',
      '--timeout',
      '300',
      '--url',
      `redis://127.0.0.1:${port}`,
      '--',
      'true',
    ]);
    assert.equal(code, 4, stderr);
    assert.ok(Date.now() - started < 10_000, 'bounded');
    noStack(stderr);
  });
});
