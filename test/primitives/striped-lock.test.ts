import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { startServer, type TestServer } from '../../harness/server.js';

let server: TestServer;
before(async () => {
  server = await startServer();
});

const sampleKeys = ['order:1', 'order:2', 'customer:Ærøskøbing', '🔒', 'x'.repeat(1_000), 'a', 'b', 'sku-42'];

describe('StripedLock', () => {
  it('maps a key to the same stripe on every call, client and process', async () => {
    const first = server.lockClient().getStripedLock('orders', 16);
    const second = server.lockClient().getStripedLock('orders', 16);
    const here = sampleKeys.map((key) => first.indexOf(key));
    assert.deepEqual(
      sampleKeys.map((key) => second.indexOf(key)),
      here,
    );
    assert.deepEqual(
      sampleKeys.map((key) => first.get(key).name),
      here.map((index) => `orders:${index}`),
    );
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', '--input-type=module', '-e', childIndexes(16)],
      { cwd: fileURLToPath(new URL('../..', import.meta.url)) },
    );
    assert.deepEqual(JSON.parse(stdout), here, 'another process computes the same stripes');
    // Pinned values: changing the hash would silently split a deployment that mixes versions.
    assert.deepEqual(
      ['order:1', 'order:2', 'sku-42'].map((key) => first.indexOf(key)),
      [7, 9, 3],
    );
    const wide = server.lockClient().getStripedLock('orders', 1_000);
    assert.deepEqual(
      ['order:1', 'order:2', 'sku-42'].map((key) => wide.indexOf(key)),
      [215, 425, 211],
    );
  });

  it('the same key excludes across clients; keys of other stripes do not contend', async () => {
    const a = server.lockClient().getStripedLock('stock', 8);
    const b = server.lockClient().getStripedLock('stock', 8);
    const key = 'sku-1';
    const other = Array.from({ length: 100 }, (_, i) => `sku-${i}`).find((k) => a.indexOf(k) !== a.indexOf(key))!;
    await a.get(key).lock();
    assert.equal(await b.get(key).tryLock(), false);
    // A new handle per get() is a new owner, exactly like getLock(): unlock with the one that locked.
    const otherLock = b.get(other);
    assert.equal(await otherLock.tryLock(), true);
    await otherLock.unlock();
    const sameStripe = server.lockClient().getLock(`stock:${a.indexOf(key)}`);
    assert.equal(await sameStripe.tryLock(), false, 'stripe i is the plain lock <name>:<i>');
    const held = a.get(key);
    assert.equal(await held.isLocked(), true);
    assert.equal(await held.forceUnlock(), true);
    assert.equal(await b.get(key).tryLock(), true);
  });

  it('spreads keys evenly over the stripes', () => {
    const locks = server.lockClient();
    for (const stripes of [7, 16, 64]) {
      const striped = locks.getStripedLock('spread', stripes);
      const perStripe = 2_000;
      const counts = new Array<number>(stripes).fill(0);
      for (let i = 0; i < stripes * perStripe; i++) counts[striped.indexOf(`order-${i}`)]!++;
      // Each count is binomial with sd about sqrt(2000) = 45: 15 % (300) is over 6 sd.
      for (const count of counts)
        assert.ok(Math.abs(count - perStripe) < perStripe * 0.15, `${stripes} stripes: ${counts.join(',')}`);
      // Chi-square with stripes-1 degrees of freedom: mean stripes-1, far below 3 x that.
      const chi = counts.reduce((sum, count) => sum + (count - perStripe) ** 2 / perStripe, 0);
      assert.ok(chi < 3 * (stripes - 1) + 20, `chi-square ${chi.toFixed(1)} for ${stripes} stripes`);
    }
  });

  it('a single stripe is one lock for every key', async () => {
    const striped = server.lockClient().getStripedLock('single', 1);
    assert.equal(striped.indexOf('a'), 0);
    assert.equal(striped.indexOf('zzz'), 0);
    const lock = striped.get('a');
    await lock.lock();
    assert.equal(await striped.get('zzz').tryLock(), false);
    await lock.unlock();
  });

  it('refuses bad names, stripe counts and keys before Redis', () => {
    const locks = server.lockClient();
    const names = (argument: string) => (error: unknown) =>
      error instanceof Error && error.message.includes(`\`${argument}\``);
    assert.throws(
      () => locks.getStripedLock(3 as unknown as string, 4),
      (e: unknown) => e instanceof TypeError && names('name')(e),
    );
    assert.throws(() => locks.getStripedLock('', 4), RangeError);
    assert.throws(
      () => locks.getStripedLock('s', 0),
      (e: unknown) => e instanceof RangeError && names('stripes')(e),
    );
    assert.throws(() => locks.getStripedLock('s', -2), RangeError);
    assert.throws(() => locks.getStripedLock('s', 2.5), RangeError);
    assert.throws(() => locks.getStripedLock('s', Number.NaN), RangeError);
    assert.throws(() => locks.getStripedLock('s', '4' as unknown as number), TypeError);
    const striped = locks.getStripedLock('s', 4);
    assert.throws(
      () => striped.get(5 as unknown as string),
      (e: unknown) => e instanceof TypeError && names('key')(e),
    );
    assert.throws(() => striped.indexOf(undefined as unknown as string), TypeError);
  });
});

function childIndexes(stripes: number): string {
  return `
    const { createStripedLock } = await import('./src/primitives/striped-lock.ts');
    const striped = createStripedLock({}, 'orders', ${stripes});
    const keys = ${JSON.stringify(sampleKeys)};
    process.stdout.write(JSON.stringify(keys.map((key) => striped.indexOf(key))));
  `;
}
