import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import type { Snapshot } from '../../src/cli/inspect.js';
import type { PrimitiveReport } from '../../src/cli/decode.js';

type Report<K> = Extract<PrimitiveReport, { kind: K }>;
import { eventually } from '../../harness/eventually.js';
import { startServer, type TestServer } from '../../harness/server.js';
import { cli } from './run-cli.js';

let server: TestServer;
before(async () => {
  server = await startServer();
});

async function inspectJson(...args: string[]): Promise<Snapshot> {
  const { code, stdout, stderr } = await cli(['inspect', '--json', '--url', server.url, ...args]);
  assert.equal(code, 0, stderr);
  return JSON.parse(stdout) as Snapshot;
}

const find = <T>(snapshot: Snapshot, kind: string, name: string): T => {
  const report = snapshot.primitives.find((p) => p.kind === kind && p.name === name);
  assert.ok(report, `${kind} ${name} in ${JSON.stringify(snapshot.primitives)}`);
  return report as T;
};

describe('latchkey inspect (standalone)', () => {
  it('decodes each primitive: owners, holds, TTLs, queued waiters, permits, counts, tokens', async () => {
    const [mine, other] = [server.lockClient(), server.lockClient()];
    await mine.scope(async () => {
      const order = mine.getLock('order:7');
      await order.lock();
      await order.lock();
    });
    const stop = new AbortController();
    const parked = [other.getLock('order:7'), other.getLock('order:7')].map((lock) =>
      lock.lock({ signal: stop.signal }).catch(() => undefined),
    );
    await eventually(async () => (await server.client().llen('latchkey:{order:7}:lock:queue')) === 2, 3_000, 'queued');
    const token = await mine.getFencedLock('report').lockAndGetToken({ leaseTime: 60_000 });
    await mine.getReadWriteLock('catalog').readLock().lock({ leaseTime: 60_000 });
    const quota = mine.getSemaphore('quota');
    await quota.trySetPermits(1);
    await quota.acquire();
    const semaphoreWait = other
      .getSemaphore('quota')
      .acquire(1, { signal: stop.signal })
      .catch(() => undefined);
    const gpus = mine.getPermitExpirableSemaphore('gpu');
    await gpus.trySetPermits(3);
    const permit = await gpus.acquire({ leaseTime: 60_000 });
    await mine.getCountDownLatch('import').trySetCount(2);
    await eventually(async () => (await server.client().zcard('latchkey:{quota}:semaphore:queue')) === 1, 3_000);

    const snapshot = await inspectJson();
    assert.equal(snapshot.mode, 'standalone');
    const order = find<Report<'lock'>>(snapshot, 'lock', 'order:7');
    assert.equal(order.holders.length, 1);
    assert.equal(order.holders[0]!.client, mine.id);
    assert.equal(order.holders[0]!.holds, 2);
    assert.ok(order.ttl > 0 && order.ttl <= 30_000);
    assert.deepEqual(
      order.queue.map((w) => [w.position, w.client]),
      [
        [1, other.id],
        [2, other.id],
      ],
    );
    assert.ok(order.queue.every((w) => w.placeLapsesIn !== null && w.placeLapsesIn > 0));
    assert.equal(order.listening, 1, "the waiters' client listens on its hand-over channel");
    const report = find<Report<'lock'>>(snapshot, 'lock', 'report');
    assert.equal(report.token, String(token));
    assert.equal(report.lastToken, String(token));
    const catalog = find<{ readers: { client: string }[]; writer: unknown }>(snapshot, 'read-write-lock', 'catalog');
    assert.equal(catalog.writer, null);
    assert.deepEqual(
      catalog.readers.map((r) => r.client),
      [mine.id],
    );
    const semaphore = find<Report<'semaphore'>>(snapshot, 'semaphore', 'quota');
    assert.equal(semaphore.available, 0);
    assert.equal(semaphore.waiters.length, 1);
    assert.equal(semaphore.waiters[0]!.permits, 1);
    assert.ok(semaphore.waiters[0]!.waitingFor >= 0 && semaphore.waiters[0]!.waitingFor < 60_000);
    const gpu = find<Report<'permit-expirable-semaphore'>>(snapshot, 'permit-expirable-semaphore', 'gpu');
    assert.deepEqual([gpu.total, gpu.available, gpu.holders[0]!.permit], [3, 2, permit]);
    assert.equal(find<{ count: number }>(snapshot, 'count-down-latch', 'import').count, 2);

    const text = await cli(['inspect', '--url', server.url]);
    assert.equal(text.code, 0);
    assert.match(text.stdout, new RegExp(`lock order:7 {2}held {2}ttl \\d`));
    assert.match(text.stdout, new RegExp(`owner ${mine.id}:\\S+ {2}holds 2`));
    assert.match(text.stdout, /2 waiters queued:\n {4}1\. \S+ {2}waiting [\d.]+ m?s {2}place lapses in/);
    assert.match(text.stdout, /semaphore quota {2}0 permits free/);
    assert.match(text.stdout, /permit-expirable-semaphore gpu {2}2 of 3 permits free/);
    assert.ok(!text.stdout.includes('\u001b['), 'no colour when not a terminal');

    const filtered = await inspectJson('order:*');
    assert.deepEqual(
      filtered.primitives.map((p) => p.name),
      ['order:7'],
    );
    stop.abort();
    await Promise.all([...parked, semaphoreWait]);
  });

  it('--watch --json prints one snapshot per line until SIGTERM, then exits 0', async () => {
    const { startCli } = await import('./run-cli.js');
    const child = startCli(['inspect', '--watch', '--json', '--interval', '200', '--url', server.url]);
    let lines = 0;
    child.stdout!.on('data', (chunk: Buffer) => {
      lines += chunk.toString().split('\n').length - 1;
      if (lines >= 2) child.kill('SIGTERM');
    });
    const { code, stdout } = await child.output();
    assert.equal(code, 0);
    for (const line of stdout.trim().split('\n')) assert.ok((JSON.parse(line) as Snapshot).primitives);
  });
});

describe('latchkey unlock --force', () => {
  it('releases every kind as documented, and refuses without --force', async () => {
    const holder = server.lockClient();
    const stuck = holder.getLock('stuck');
    await stuck.lock({ leaseTime: 60_000 });
    const refused = await cli(['unlock', 'stuck', '--url', server.url]);
    assert.equal(refused.code, 2);
    assert.equal(await stuck.isLocked(), true);

    const waiter = server.lockClient().getLock('stuck').lock({ leaseTime: 60_000 });
    await eventually(async () => (await server.client().llen('latchkey:{stuck}:lock:queue')) === 1, 3_000);
    const unlocked = await cli(['unlock', 'stuck', '--force', '--url', server.url]);
    assert.equal(unlocked.code, 0, unlocked.stderr);
    assert.match(unlocked.stdout, new RegExp(`lock "stuck": unlocked \\(was held by ${holder.id}:\\S+ x1\\); handed`));
    await waiter; // the next waiter got it

    const rw = holder.getReadWriteLock('shelf');
    await rw.readLock().lock({ leaseTime: 60_000 });
    const rwOut = await cli(['unlock', 'shelf', '--force', '--url', server.url]);
    assert.match(rwOut.stdout, /read-write-lock "shelf": unlocked \(was: readers /);
    assert.equal(await rw.writeLock().tryLock({ leaseTime: 1_000 }), true, 'the readers are gone');

    const gpus = holder.getPermitExpirableSemaphore('gpus');
    await gpus.trySetPermits(1);
    await gpus.acquire();
    assert.match((await cli(['unlock', 'gpus', '--force', '--url', server.url])).stdout, /released 1 of 1 permits/);
    assert.equal(await gpus.availablePermits(), 1);

    const latch = holder.getCountDownLatch('boot');
    await latch.trySetCount(5);
    const awaiting = server.lockClient().getCountDownLatch('boot').await({ waitTime: 20_000 });
    assert.equal((await cli(['unlock', 'boot', '--force', '--url', server.url])).code, 0);
    assert.equal(await awaiting, true, 'opening the latch releases those awaiting it');

    await holder.getSemaphore('pool').trySetPermits(2);
    const semaphore = await cli(['unlock', 'pool', '--force', '--url', server.url]);
    assert.equal(semaphore.code, 1);
    assert.match(semaphore.stdout, /permits have no owners/);

    const nothing = await cli(['unlock', 'never-held', '--force', '--url', server.url]);
    assert.equal(nothing.code, 1);
    assert.match(nothing.stdout, /nothing named "never-held" is held/);
  });
});
