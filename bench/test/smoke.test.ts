/**
 * The benchmark's smoke test: `npm run bench -- --quick` runs every scenario and writes its results.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { FLOOR_LOCK_SCRIPTS, FLOOR_TWO_SCRIPTS, floorOnServers, HAND_OVER_RING } from '../names.js';
import type { BenchResults } from '../report.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const out = mkdtempSync(join(tmpdir(), 'latchkey-bench-'));
after(() => rmSync(out, { recursive: true, force: true }));

function runBench(): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', 'bench/run.ts', '--quick', '--out', out],
      { cwd: root, timeout: 150_000 },
      (error, stdout, stderr) =>
        error ? reject(new Error(`bench failed: ${error.message}\n${stderr}`)) : resolve({ stdout, stderr }),
    );
  });
}

// The benchmark itself, in its quick mode, so that it cannot rot. No timing is asserted: only that
// every scenario ran for every library, wrote its files, and that no two holders ever overlapped.
describe('npm run bench -- --quick', () => {
  it('runs every scenario and library, writes JSON and SVG, and sees no overlapping holders', async () => {
    const { stdout, stderr } = await runBench();
    assert.match(stderr, /\[8\/8\]/, 'progress is reported while it runs');
    const files = readdirSync(out);
    const json = files.find((file) => file.endsWith('.json'));
    assert.ok(json, `no JSON written: ${files.join(', ')}`);
    assert.ok(
      files.some((file) => file.endsWith('.svg')),
      'no SVG written',
    );
    assert.match(readFileSync(join(out, json.replace(/\.json$/, '.svg')), 'utf8'), /^<svg[^>]*>[\s\S]*<\/svg>\n$/);
    const results = JSON.parse(readFileSync(join(out, json), 'utf8')) as BenchResults;

    const libraries = ['latchkey Lock', 'latchkey FairLock', 'redlock', 'redis-semaphore'];
    // Scenario 1 runs the locks taken with a lease beside the watchdog's.
    assert.deepEqual(
      results.single.map((row) => row.library),
      [
        FLOOR_TWO_SCRIPTS,
        FLOOR_LOCK_SCRIPTS,
        'latchkey Lock',
        'latchkey Lock (lease)',
        'latchkey FairLock',
        'latchkey FairLock (lease)',
        'latchkey FencedLock (lease)',
        'redlock',
        'redis-semaphore',
      ],
    );
    assert.deepEqual(
      results.concurrent.map((row) => row.library),
      libraries,
    );
    // The hand-over ring runs first in each configuration (once in a quick run), then the libraries.
    assert.deepEqual(
      results.contention.map((row) => row.library),
      [HAND_OVER_RING, ...libraries],
    );
    for (const row of [...results.single, ...results.concurrent]) assert.ok(row.pairsPerSec > 0, row.library);
    for (const row of results.contention) {
      assert.equal(row.overlaps, 0, `${row.library}: two holders overlapped`);
      assert.ok(row.acquisitions > 0, `${row.library}: no acquisition`);
      // latchkey's rows count their hand-overs: Redis the messages, the workers how each acquisition came.
      assert.equal(row.handOvers !== undefined, row.library.startsWith('latchkey'), row.library);
      if (row.handOvers) assert.ok(row.handOvers.messages > 0 && row.handOvers.byMessage > 0, row.library);
    }
    assert.deepEqual(
      results.watchdog.map((row) => row.library),
      ['latchkey Lock', 'redis-semaphore', 'redlock', 'latchkey Lock, Cluster'],
    );
    assert.deepEqual(
      results.multi.map((row) => row.library),
      [
        floorOnServers(1),
        floorOnServers(3),
        floorOnServers(5),
        'latchkey Lock',
        'latchkey MultiLock',
        'latchkey RedLock',
        'latchkey RedLock (lease)',
        'redlock',
      ],
    );
    assert.deepEqual(
      (results.multiThroughput ?? []).map((row) => `${row.library} on ${row.servers}`),
      [
        `${floorOnServers(3)} on 3`,
        `${floorOnServers(5)} on 5`,
        'latchkey MultiLock on 3',
        'latchkey RedLock on 5',
        'latchkey RedLock (lease) on 5',
        'redlock on 5',
      ],
    );
    for (const row of results.multiThroughput ?? []) assert.ok(row.pairsPerSec > 0, row.library);
    // Scenario 7: every primitive and peer, alone and contended (the floor alone), counted by Redis.
    const cost = results.redisCost ?? [];
    const measured = [
      'latchkey Lock',
      'latchkey Lock (lease)',
      'latchkey FairLock',
      'latchkey FencedLock',
      'latchkey ReadWriteLock write',
      'latchkey ReadWriteLock read',
      'latchkey Semaphore',
      'latchkey MultiLock (3)',
      'latchkey RedLock (5)',
      'redlock',
      'redis-semaphore',
    ];
    assert.deepEqual(
      cost.map((row) => `${row.library} x${row.clients}`),
      [`${FLOOR_TWO_SCRIPTS} x1`, ...measured.flatMap((library) => [`${library} x1`, `${library} x3`])],
    );
    for (const row of cost) assert.ok(row.pairs > 0 && row.scripts > 0 && row.scriptUs > 0, row.library);
    // Scenario 8: latchkey at two sizes, with the watchdog and with a lease, then the peers; every
    // latchkey waiter drained (the peers' may stop at the cap).
    assert.deepEqual(
      (results.held ?? []).map((row) => `${row.library} ${row.locks}`),
      [
        'latchkey Lock 100',
        'latchkey Lock 1000',
        'latchkey Lock (lease) 100',
        'latchkey Lock (lease) 1000',
        'redis-semaphore 1000',
        'redlock 1000',
      ],
    );
    const waiters = results.waiters ?? [];
    assert.deepEqual(
      waiters.map((row) => `${row.library} ${row.waiters}/${row.locks}`),
      [
        'latchkey Lock 50/1',
        'latchkey Lock 500/1',
        'latchkey Lock 50/10',
        'latchkey Lock 500/10',
        'redis-semaphore 50/1',
        'redis-semaphore 50/10',
        'redlock 50/1',
        'redlock 50/10',
      ],
    );
    for (const row of waiters.filter((r) => r.library.startsWith('latchkey')))
      assert.equal(row.drained, row.waiters, `${row.library} ${row.waiters}/${row.locks}`);
    for (const scenario of [7, 8])
      assert.ok(
        results.targets?.some((check) => check.scenario === scenario),
        `scenario ${scenario} is checked`,
      );
    // Scenario 6: every fault noticed (by renewal at least), no untouched lock's signal aborted.
    const detection = results.detection ?? [];
    assert.deepEqual(
      detection.map((run) => run.detection),
      results.missing.some((line) => line.includes('lossDetection')) ? ['default'] : ['default', 'renewal'],
    );
    for (const run of detection) {
      assert.deepEqual(
        run.rows.map((row) => row.fault),
        ['deletion', 'takeover', 'expiry'],
      );
      for (const row of run.rows) assert.equal(row.detected, row.locks, `${run.detection} ${row.fault}`);
      assert.equal(
        run.takenOver,
        run.rows.find((row) => row.fault === 'takeover')!.locks,
        'every takeover took the lock',
      );
      assert.equal(run.falseAlarms, 0, `${run.detection}: a signal aborted for a lock nobody touched`);
    }
    assert.ok(results.notificationFloors && results.notificationFloors.every((floor) => floor.samples > 0));
    assert.ok(results.targets && results.targets.length > 0, 'the targets are checked');
    assert.match(stdout, /\nTargets\n/);
    assert.doesNotMatch(stdout, /issue/i, 'no internal issue numbers in the output');
    for (const heading of [
      '1. One client',
      '3. Worker processes',
      '4. Watchdog',
      '5. Acquire latency',
      '6. Lost-lock',
      '7. What a pair costs Redis',
      '8. Scale: locks held',
      '8. Scale: waiters',
    ])
      assert.ok(stdout.includes(heading), heading);
  });
});
