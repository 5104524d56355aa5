import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { freePort } from '../../harness/redis-process.js';
import { eventually } from '../../harness/eventually.js';
import { startServer, type TestServer } from '../../harness/server.js';
import { portOpen, processesTagged, runDemo, selling, stopIfRunning } from './demo-process.js';

const SMALL = ['--workers', '3', '--products', '3', '--stock', '15', '--seconds', '20'];
const ENDLESS = ['--workers', '2', '--products', '2', '--stock', '100000', '--seconds', '60'];

let server: TestServer;
before(async () => {
  server = await startServer();
});

describe('npm run demo', () => {
  it('sells everything with a private server, no overlap, stock equal to orders', async () => {
    const { code, stdout, stderr } = await runDemo(SMALL).output();
    assert.equal(code, 0, stdout + stderr);
    assert.match(stdout, /orders\s+45 in/);
    assert.match(stdout, /45 at start, 0 left, 45 sold \(equal to the orders\)/);
    assert.match(stdout, /overlaps seen\s+0/);
    assert.match(stdout, /verdict\s+OK/);
    const port = Number(/private redis-server on port (\d+)/.exec(stdout)?.[1]);
    assert.equal(await portOpen(port), false, 'the private server was stopped');
  });

  it('--no-lock, the control run, shows the overlaps the lock prevents', async () => {
    // One product and enough stock that every worker is selling it at once, whenever each started.
    const contended = ['--workers', '4', '--products', '1', '--stock', '300', '--seconds', '20'];
    const { code, stdout } = await runDemo([...contended, '--no-lock']).output();
    assert.equal(code, 0, stdout);
    assert.match(stdout, /WITHOUT the lock/);
    const overlaps = Number(/overlaps seen\s+(\d+)/.exec(stdout)?.[1]);
    assert.ok(overlaps > 0, stdout);
    assert.match(stdout, /verdict\s+UNSAFE, as expected without the lock/);
  });

  for (const [signal, code] of [
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const) {
    it(`${signal} to its process group stops every worker and the server, with no stack trace`, async () => {
      const child = runDemo(ENDLESS);
      after(() => stopIfRunning(child));
      const port = await selling(child);
      assert.equal(await portOpen(port), true);
      // The demo and both workers (redis-server overwrites its environment with its title).
      await eventually(() => processesTagged(child.tag).length === 3, 10_000, 'every worker started');
      process.kill(-child.pid!, signal); // a terminal's Ctrl-C reaches the whole group
      const result = await child.output();
      assert.equal(result.code, code, result.stderr);
      assert.doesNotMatch(result.stdout + result.stderr, /^\s+at |Error/m);
      assert.equal(await portOpen(port), false);
      assert.deepEqual(processesTagged(child.tag), [], 'no worker left behind');
    });
  }

  it('on REDIS_URL it writes only under its own namespace and removes it, even when stopped', async () => {
    const redis = server.client();
    await redis.set('users:own-key', 'kept');
    const child = runDemo(ENDLESS, { REDIS_URL: server.url });
    after(() => stopIfRunning(child));
    await selling(child);
    child.kill('SIGTERM');
    const { code } = await child.output();
    assert.equal(code, 143);
    assert.deepEqual(await redis.keys('*'), ['users:own-key']);
  });

  it('fails fast, in one line, on an unreachable REDIS_URL', async () => {
    const started = Date.now();
    const { code, stderr } = await runDemo([], { REDIS_URL: `redis://127.0.0.1:${await freePort()}` }).output();
    assert.equal(code, 4);
    assert.match(stderr, /^latchkey: cannot reach Redis at .*ECONNREFUSED/);
    assert.ok(Date.now() - started < 15_000);
  });
});
