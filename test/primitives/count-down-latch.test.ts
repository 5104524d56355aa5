import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { RedisUnavailableError } from '../../src/index.js';
import { commandCalls, startServer, totalCalls, type TestServer } from '../../harness/server.js';
import { keysWithTtl } from '../../harness/keys.js';
import { eventually, sleep } from '../../harness/eventually.js';
import { contextOf } from '../../src/client.js';

let server: TestServer;
before(async () => {
  server = await startServer();
});

const scriptCalls = async (server: TestServer): Promise<number> => {
  const redis = server.client();
  return (await commandCalls(redis, 'evalsha')) + (await commandCalls(redis, 'eval'));
};

describe('CountDownLatch: count', () => {
  it('is set once, counted down from any client, and deleted at 0', async () => {
    const a = server.lockClient().getCountDownLatch('count');
    const b = server.lockClient().getCountDownLatch('count');
    assert.equal(await a.getCount(), 0, 'a latch never set counts 0');
    assert.equal(await a.trySetCount(3), true);
    assert.equal(await b.trySetCount(5), false, 'only when not yet set');
    assert.equal(await b.getCount(), 3);
    await b.countDown();
    await a.countDown();
    assert.equal(await a.getCount(), 1);
    await b.countDown();
    assert.equal(await a.getCount(), 0);
    assert.equal(await server.client().exists('latchkey:{count}:latch:count'), 0);
    await a.countDown();
    assert.equal(await a.getCount(), 0, 'counting down an unset latch does nothing');
    assert.equal(await a.trySetCount(2), true, 'a latch that reached 0 can be set again');
    assert.equal(await a.delete(), true);
    assert.equal(await a.delete(), false);
  });

  it('trySetCount(0) stores nothing: a latch at 0 is a latch not set', async () => {
    const latch = server.lockClient().getCountDownLatch('zero');
    assert.equal(await latch.trySetCount(0), true);
    assert.equal(await server.client().exists('latchkey:{zero}:latch:count'), 0);
    assert.equal(await latch.await({ waitTime: 0 }), true);
    assert.equal(await latch.trySetCount(1), true);
    assert.equal(await latch.trySetCount(0), false, 'a latch is already set');
    await latch.countDown();
  });

  it('keeps the count without TTL while set, and no key after it reached 0', async () => {
    const redis = server.client();
    const latch = server.lockClient().getCountDownLatch('ttl');
    await latch.trySetCount(2);
    // Besides the count, only each call's short-lived marker (what makes a repeated call harmless).
    const withoutTtl = async (): Promise<string[]> =>
      [...(await keysWithTtl(redis, 'latchkey:{ttl}*'))].filter(([, ttl]) => ttl < 0).map(([key]) => key);
    assert.deepEqual(await withoutTtl(), ['latchkey:{ttl}:latch:count']);
    await latch.countDown();
    await latch.countDown();
    assert.deepEqual(await withoutTtl(), []);
    assert.equal(await redis.exists('latchkey:{ttl}:latch:count'), 0);
  });
});

describe('CountDownLatch: await', () => {
  it('wakes every waiter of every client when the count reaches 0', async () => {
    const setter = server.lockClient().getCountDownLatch('wake');
    await setter.trySetCount(2);
    const clients = [server.lockClient(), server.lockClient()];
    const waits = [0, 1, 2, 3].map((i) => clients[i % 2]!.getCountDownLatch('wake').await());
    let settled = 0;
    for (const wait of waits) void wait.then(() => settled++);
    await setter.countDown();
    await sleep(100);
    assert.equal(settled, 0, 'not yet at 0');
    const started = Date.now();
    await setter.countDown();
    assert.deepEqual(await Promise.all(waits), [true, true, true, true]);
    assert.ok(Date.now() - started < 2_000, 'woken by the message');
    for (const client of clients) assert.equal(contextOf(client).waiters.channelCount, 0);
  });

  it('waits without polling: two reads, then only the message', async () => {
    const latch = server.lockClient().getCountDownLatch('no-poll');
    const other = server.lockClient().getCountDownLatch('no-poll');
    await latch.trySetCount(1);
    await server.client().config('RESETSTAT');
    const wait = latch.await();
    await sleep(1_500);
    const during = await scriptCalls(server);
    assert.ok(during <= 2, `${during} script calls while waiting 1.5 s`);
    await other.countDown();
    assert.equal(await wait, true);
  });

  it('wakes a waiter in another process', async () => {
    const latch = server.lockClient().getCountDownLatch('process');
    await latch.trySetCount(3);
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', '--input-type=module', '-e', childAwaiting(server.port)],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
        cwd: fileURLToPath(new URL('../..', import.meta.url)),
      },
    );
    try {
      let output = '';
      const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
      child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
      await eventually(() => output.includes('waiting'), 20_000, 'the child waiting', { every: 20 });
      for (let i = 0; i < 3; i++) await latch.countDown();
      assert.equal(await exited, 0);
      assert.match(output, /reached true/);
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('returns false when waitTime elapses; true at once for a latch at 0', async () => {
    const latch = server.lockClient().getCountDownLatch('timeout');
    assert.equal(await latch.await(), true, 'never set');
    await latch.trySetCount(1);
    assert.equal(await latch.await({ waitTime: 0 }), false);
    const started = Date.now();
    assert.equal(await latch.await({ waitTime: 200 }), false);
    assert.ok(Date.now() - started >= 190);
    await latch.countDown();
    assert.equal(await latch.await({ waitTime: 0 }), true);
  });

  it('delete wakes waiters, who see 0', async () => {
    const latch = server.lockClient().getCountDownLatch('delete');
    await latch.trySetCount(10);
    const wait = server.lockClient().getCountDownLatch('delete').await({ waitTime: 10_000 });
    await sleep(50);
    assert.equal(await latch.delete(), true);
    assert.equal(await wait, true);
  });

  it('abort rejects with the reason and leaves no subscription', async () => {
    const locks = server.lockClient();
    const latch = locks.getCountDownLatch('abort');
    await latch.trySetCount(1);
    const controller = new AbortController();
    const wait = latch.await({ signal: controller.signal });
    await sleep(50);
    controller.abort(new Error('no longer needed'));
    await assert.rejects(wait, /no longer needed/);
    assert.equal(contextOf(locks).waiters.channelCount, 0);
    await assert.rejects(latch.await({ signal: controller.signal }), /no longer needed/);
    await latch.delete();
  });

  it('a frozen server gives the caller an error, never a hang or a false "not yet"', async () => {
    const frozen = await startServer();
    const locks = frozen.lockClient({ commandTimeout: 300 });
    const latch = locks.getCountDownLatch('frozen');
    await latch.trySetCount(1);
    frozen.freeze();
    try {
      const started = Date.now();
      // It could not ask: that is no answer about the count.
      await assert.rejects(latch.await({ waitTime: 200 }), RedisUnavailableError);
      await assert.rejects(latch.countDown(), RedisUnavailableError);
      await assert.rejects(latch.await(), RedisUnavailableError);
      assert.ok(Date.now() - started < 3_000);
    } finally {
      frozen.resume();
    }
    // The cut countDown was already sent: it runs once, whole, when the server resumes.
    assert.equal(await latch.getCount(), 0);
    assert.equal(await frozen.client().exists('latchkey:{frozen}:latch:count'), 0);
  });
});

describe('CountDownLatch: input', () => {
  it('refuses bad counts, options and names before Redis', async () => {
    const locks = server.lockClient();
    const latch = locks.getCountDownLatch('input');
    const redis = server.client();
    await latch.getCount(); // connected
    const callsBefore = await totalCalls(redis);
    const argument = (name: string) => (error: unknown) =>
      error instanceof Error && error.message.includes(`\`${name}\``);
    await assert.rejects(latch.trySetCount(-1), (e: unknown) => e instanceof RangeError && argument('count')(e));
    await assert.rejects(latch.trySetCount(1.5), RangeError);
    await assert.rejects(latch.trySetCount(Number.NaN), RangeError);
    await assert.rejects(
      latch.trySetCount('3' as unknown as number),
      (e: unknown) => e instanceof TypeError && argument('count')(e),
    );
    await assert.rejects(
      latch.await({ waitTime: -1 }),
      (e: unknown) => e instanceof RangeError && argument('waitTime')(e),
    );
    await assert.rejects(latch.await({ signal: 'x' as unknown as AbortSignal }), TypeError);
    await assert.rejects(latch.await(5 as unknown as object), TypeError);
    assert.throws(
      () => locks.getCountDownLatch(7 as unknown as string),
      (e: unknown) => e instanceof TypeError && argument('name')(e),
    );
    assert.throws(() => locks.getCountDownLatch(''), RangeError);
    assert.equal(await totalCalls(redis), callsBefore, 'nothing reached Redis');
  });
});

function childAwaiting(port: number): string {
  return `
    import { Redis } from 'ioredis';
    const { LockClient } = await import('./src/index.ts');
    const redis = new Redis({ port: ${port}, host: '127.0.0.1' });
    const locks = new LockClient(redis);
    const latch = locks.getCountDownLatch('process');
    const reached = latch.await({ waitTime: 20_000 });
    // Subscribed once the count was read twice; a short pause makes "waiting" truthful.
    await new Promise((resolve) => setTimeout(resolve, 200));
    process.stdout.write('waiting\\n');
    process.stdout.write('reached ' + (await reached) + '\\n');
    await locks.shutdown();
    redis.disconnect();
  `;
}
