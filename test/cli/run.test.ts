import assert from 'node:assert/strict';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { eventually } from '../../harness/eventually.js';
import { startServer, type TestServer } from '../../harness/server.js';
import { cli, startCli } from './run-cli.js';

let server: TestServer;
const dir = mkdtempSync(join(tmpdir(), 'latchkey-run-'));
before(async () => {
  server = await startServer();
});
after(() => rmSync(dir, { recursive: true, force: true }));

/** A command that records SIGTERM in `marker`, then exits 0; else runs until stopped. */
const untilTerm = (marker: string): string[] => [
  'sh',
  '-c',
  `trap 'echo term > ${marker}; exit 0' TERM; echo started > ${marker}.up; while :; do sleep 0.05; done`,
];

describe('latchkey run --lock NAME -- COMMAND', () => {
  it("holds the lock while the command runs, passes LATCHKEY_LOCK, and exits with the command's code", async () => {
    const out = join(dir, 'env');
    const { code, stderr } = await cli([
      'run',
      '--lock',
      'job',
      '--url',
      server.url,
      '--',
      'sh',
      '-c',
      `echo "$LATCHKEY_LOCK" > ${out}; exit 7`,
    ]);
    assert.equal(code, 7, stderr);
    assert.equal(readFileSync(out, 'utf8').trim(), 'job');
    assert.equal(await server.lockClient().getLock('job').isLocked(), false, 'released after the command');
  });

  it('exits 5 when the lock stays busy past --wait, and runs nothing', async () => {
    const holder = server.lockClient().getLock('busy');
    await holder.lock({ leaseTime: 30_000 });
    const ran = join(dir, 'ran');
    const { code, stderr } = await cli([
      'run',
      '--lock',
      'busy',
      '--wait',
      '200',
      '--url',
      server.url,
      '--',
      'touch',
      ran,
    ]);
    assert.equal(code, 5);
    assert.match(stderr, /lock "busy" is busy: not acquired within 200 ms/);
    assert.equal(existsSync(ran), false);
    await holder.unlock();
  });

  it('stops the command with SIGTERM and exits 6 when the lease is lost', async () => {
    const marker = join(dir, 'lost');
    const run = startCli([
      'run',
      '--lock',
      'fragile',
      '--watchdog',
      '600',
      '--url',
      server.url,
      '--',
      ...untilTerm(marker),
    ]);
    const lock = server.lockClient().getLock('fragile');
    await eventually(() => existsSync(`${marker}.up`), 10_000, 'command started');
    assert.equal(await lock.isLocked(), true);
    await lock.forceUnlock(); // someone takes it away; the next renewal finds it gone
    const { code, stderr } = await run.output();
    assert.equal(code, 6, stderr);
    assert.match(stderr, /lost the lock "fragile"/);
    assert.equal(readFileSync(marker, 'utf8').trim(), 'term', 'the command got SIGTERM');
  });

  it('passes SIGTERM on to the command, then releases the lock', async () => {
    const marker = join(dir, 'forwarded');
    const run = startCli(['run', '--lock', 'polite', '--url', server.url, '--', ...untilTerm(marker)]);
    await eventually(() => existsSync(`${marker}.up`), 10_000, 'command started');
    run.kill('SIGTERM');
    const { code, stderr } = await run.output();
    assert.equal(code, 0, stderr); // the command's own exit code after its trap
    assert.equal(readFileSync(marker, 'utf8').trim(), 'term');
    assert.equal(await server.lockClient().getLock('polite').isLocked(), false);
  });

  it('a signal that comes as the command starts is passed on too, never leaving the command running', async () => {
    // The command signals latchkey as its first act, racing the spawn that started it: a signal
    // handled by Node's default there ended latchkey and left the command running (seen under load).
    for (let i = 0; i < 5; i++) {
      const marker = join(dir, `early-${i}`);
      const command = `trap 'echo term > ${marker}; exit 0' TERM; echo $$ > ${marker}.pid; kill -TERM $PPID; while :; do sleep 0.05; done`;
      const run = startCli(['run', '--lock', 'early', '--url', server.url, '--', 'sh', '-c', command]);
      // Its exit, not its output: an orphaned command would hold the output open for ever.
      const [code, signal] = (await once(run, 'exit')) as [number | null, NodeJS.Signals | null];
      const pid = Number(readFileSync(`${marker}.pid`, 'utf8'));
      const forwarded = await eventually(() => existsSync(marker), 2_000, 'SIGTERM passed on').then(
        () => true,
        () => false,
      );
      if (!forwarded) process.kill(pid, 'SIGKILL'); // left running: stop it, then fail
      assert.equal(forwarded, true, `run ${i}: the command never got SIGTERM (latchkey: ${code ?? signal})`);
      assert.equal(code, 0);
      assert.equal(await server.lockClient().getLock('early').isLocked(), false);
    }
  });

  it('--fenced passes the fencing token; a missing command exits 127', async () => {
    const out = join(dir, 'token');
    const fenced = await cli([
      'run',
      '--lock',
      'fenced',
      '--fenced',
      '--url',
      server.url,
      '--',
      'sh',
      '-c',
      `echo "$LATCHKEY_FENCING_TOKEN" > ${out}`,
    ]);
    assert.equal(fenced.code, 0, fenced.stderr);
    assert.match(readFileSync(out, 'utf8'), /^\d+$/m);
    const missing = await cli(['run', '--lock', 'x', '--url', server.url, '--', 'no-such-command-latchkey']);
    assert.equal(missing.code, 127);
    assert.match(missing.stderr, /command not found/);
  });
});
