/**
 * Tests of the worker fleet: a worker that dies mid-scenario fails it, not the runner.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { resource } from '../scenarios/common.js';
import { Fleet } from '../runner/fleet.js';
import { History } from '../runner/history.js';
import { Register } from '../runner/register.js';
import { startRedisServer } from '../../harness/redis-process.js';

/**
 * A worker process that dies in the middle of a scenario must fail that scenario (it cannot drain
 * when told), never crash the fault runner: a message sent to a dead worker used to throw in the
 * runner, which then exited without a summary.
 */
test('a worker that dies mid-scenario is reported stuck, and the runner goes on', { timeout: 60_000 }, async () => {
  const server = await startRedisServer();
  const dir = mkdtempSync(join(tmpdir(), 'latchkey-fleet-'));
  const fleet = new Fleet();
  after(async () => {
    await fleet.kill();
    await server.stop(true);
    rmSync(dir, { recursive: true, force: true });
  });
  const history = new History(join(dir, 'history.jsonl'));
  const config = {
    seed: 1,
    servers: [{ url: server.url, direct: server.url }],
    client: { watchdogTimeout: 1_000 },
    resources: [resource('lock', { tasks: 1, shared: 0 })],
  };
  await fleet.begin(
    [0, 1].map((worker) => ({ ...config, worker })),
    new Register(history),
    history,
    join(dir, 'workers.log'),
  );
  fleet.start();
  const victim = fleet.workers[1]!.child;
  const exited = new Promise((resolve) => victim.once('exit', resolve));
  victim.kill('SIGKILL');
  await exited;

  assert.deepEqual(await fleet.stop(5_000), [1], 'the dead worker did not drain; the live one did');
  await fleet.end(5_000);
  await history.close();
  const notes = history.records.flatMap((record) => (record.ev === 'note' ? [record.text] : []));
  assert.ok(notes.includes('worker 1 exited (SIGKILL)'), `the history says the worker died: ${JSON.stringify(notes)}`);
});
