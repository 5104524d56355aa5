import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { after, describe, it } from 'node:test';
import { freePort } from '../../harness/redis-process.js';
import { cli } from './run-cli.js';

const version = (
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
).version;
const noStack = (text: string): void => assert.doesNotMatch(text, /^\s+at /m, 'no stack trace');

describe('latchkey: usage, version and exit codes', () => {
  it('--help, -h and help print the usage and exit 0', async () => {
    const flags = [['--help'], ['-h'], ['help'], ['inspect', '--help']];
    const results = await Promise.all(flags.map((args) => cli(args)));
    results.forEach(({ code, stdout }, i) => {
      assert.equal(code, 0, flags[i]!.join(' '));
      assert.match(stdout, /latchkey inspect \[PATTERN\]/);
      assert.match(stdout, /Exit status/);
    });
  });

  it('--version prints the package version and exits 0', async () => {
    const { code, stdout } = await cli(['--version']);
    assert.equal(code, 0);
    assert.equal(stdout.trim(), version);
  });

  it('no command, an unknown command or option, or a missing argument: exit 2, one line', async () => {
    const cases = [[], ['frobnicate'], ['inspect', '--frob'], ['unlock', 'x'], ['run', '--lock', 'x'], ['bench']];
    const results = await Promise.all(cases.map((args) => cli(args, { env: { ...process.env, REDIS_URL: '' } })));
    results.forEach(({ code, stderr }, i) => {
      assert.equal(code, 2, `${cases[i]!.join(' ')}: ${stderr}`);
      noStack(stderr);
    });
  });

  it('a bad URL exits 3, an unreachable server 4, each with one line and no stack trace', async () => {
    const urls = ['http://127.0.0.1:6379', 'not a url', 'redis://127.0.0.1:6379/x'];
    const results = await Promise.all(urls.map((url) => cli(['inspect', '--url', url])));
    results.forEach(({ code, stderr }, i) => {
      assert.equal(code, 3, `${urls[i]}: ${stderr}`);
      assert.equal(stderr.trim().split('\n').length, 1, stderr);
    });
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

  it('--timeout bounds connecting as a whole: 3000 ms ends in about 3 s, not twice that and a 2 s linger', async () => {
    const sockets = new Set<Socket>();
    const silent = createServer((socket) => void sockets.add(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    after(() => {
      for (const socket of sockets) socket.destroy();
      silent.close();
    });
    const { port } = silent.address() as { port: number };
    const started = Date.now();
    const { code, stderr } = await cli(['inspect', '--timeout', '3000', '--url', `redis://127.0.0.1:${port}`]);
    const took = Date.now() - started;
    assert.equal(code, 4, stderr);
    assert.match(stderr, /no answer within 3000 ms/);
    // Generous for the CLI's own start-up under load; the old bound took 8 s (2 x 3000 + 2000).
    assert.ok(took >= 3_000 && took < 6_500, `took ${took} ms`);
  });

  it('an endpoint that does not speak the Redis protocol is named as not a Redis server', async () => {
    const http = createServer((socket) =>
      socket.on('data', () => socket.end('HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n')),
    );
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
    after(() => http.close());
    const { port } = http.address() as { port: number };
    const { code, stderr } = await cli(['inspect', '--url', `redis://127.0.0.1:${port}`]);
    assert.equal(code, 4, stderr);
    assert.match(stderr, new RegExp(`^latchkey: 127\\.0\\.0\\.1:${port} is not a Redis server`));
    assert.doesNotMatch(stderr, /report this/i);
    noStack(stderr);
  });
});
