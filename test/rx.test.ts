import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { firstValueFrom, lastValueFrom, toArray, type Subscription } from 'rxjs';
import type { LockClient } from '../src/index.js';
import { toRx } from '../src/rx.js';
import { sleep } from '../harness/eventually.js';
import { startServer, type TestServer } from '../harness/server.js';
import { contextOf } from '../src/client.js';

let server: TestServer;
before(async () => {
  server = await startServer();
});

/** Every method name along the prototype chain, as toRx should mirror them. */
function methodNames(object: object): string[] {
  const names = new Set<string>();
  for (
    let proto: object | null = object;
    proto && proto !== Object.prototype;
    proto = Object.getPrototypeOf(proto) as object | null
  ) {
    for (const name of Object.getOwnPropertyNames(proto)) {
      const value = Object.getOwnPropertyDescriptor(proto, name)?.value as unknown;
      if (name !== 'constructor' && !name.startsWith('_') && typeof value === 'function') names.add(name);
    }
  }
  return [...names].sort();
}

describe('toRx: Lock', () => {
  it('returns cold Observables: nothing runs until subscribed, each subscription runs again', async () => {
    const locks = server.lockClient();
    const lock = locks.getLock('rx-cold');
    const rx = toRx(lock);
    // One owner for the whole test (Redisson style), so that the second subscription re-enters.
    await locks.scope(async () => {
      const locking = rx.lock();
      await sleep(50);
      assert.equal(await lock.isLocked(), false, 'not subscribed yet');
      assert.equal(await firstValueFrom(locking), undefined);
      assert.equal(await lock.getHoldCount(), 1);
      await lastValueFrom(locking);
      assert.equal(await lock.getHoldCount(), 2, 'a second subscription locks again');
      assert.equal(await firstValueFrom(rx.isHeldByCurrentOwner()), true);
      await firstValueFrom(rx.unlock());
      await firstValueFrom(rx.unlock());
    });
    assert.equal(await firstValueFrom(rx.isLocked()), false);
  });

  it('tryLock emits a boolean; errors arrive as Observable errors', async () => {
    const first = toRx(server.lockClient().getLock('rx-try'));
    const second = toRx(server.lockClient().getLock('rx-try'));
    assert.deepEqual(await lastValueFrom(first.tryLock().pipe(toArray())), [true]);
    assert.equal(await firstValueFrom(second.tryLock({ waitTime: 50 })), false);
    await assert.rejects(firstValueFrom(second.unlock()), { name: 'LockNotHeldError' });
    await assert.rejects(firstValueFrom(second.tryLock({ waitTime: -1 })), { name: 'RangeError' });
    await assert.rejects(firstValueFrom(second.tryLock({ signal: 'x' as unknown as AbortSignal })), {
      name: 'TypeError',
      message: /`signal`/,
    });
    await firstValueFrom(first.unlock());
  });

  it('unsubscribing while waiting aborts the wait: nothing held, no waiter left', async () => {
    const waiterClient = server.lockClient();
    const holder = server.lockClient().getLock('rx-abort');
    const waiter = waiterClient.getLock('rx-abort');
    await holder.lock();
    let emitted = false;
    const subscription: Subscription = toRx(waiter)
      .lock()
      .subscribe({ next: () => (emitted = true), error: () => (emitted = true) });
    await sleep(100);
    assert.equal(contextOf(waiterClient).waiters.channelCount, 1, 'waiting');
    subscription.unsubscribe();
    await sleep(50);
    assert.equal(contextOf(waiterClient).waiters.channelCount, 0, 'the wait was aborted');
    await holder.unlock();
    await sleep(100);
    assert.equal(await holder.isLocked(), false, 'the aborted waiter took nothing');
    assert.equal(emitted, false, 'nothing is emitted after unsubscribe');
  });

  it('a caller signal still works alongside the subscription', async () => {
    const holder = server.lockClient().getLock('rx-own-signal');
    await holder.lock();
    const controller = new AbortController();
    const waiting = firstValueFrom(
      toRx(server.lockClient().getLock('rx-own-signal')).tryLock({ waitTime: 5_000, signal: controller.signal }),
    );
    await sleep(50);
    controller.abort(new Error('mine'));
    await assert.rejects(waiting, /mine/);
    await holder.unlock();
  });
});

describe('toRx: semaphores', () => {
  it('Semaphore: acquire(permits) puts the signal in its second argument; unsubscribe aborts', async () => {
    const locks = server.lockClient();
    const semaphore = locks.getSemaphore('rx-semaphore');
    const rx = toRx(semaphore);
    assert.equal(await firstValueFrom(rx.trySetPermits(2)), true);
    await firstValueFrom(rx.acquire());
    assert.equal(await firstValueFrom(rx.availablePermits()), 1);
    const subscription = rx.acquire(2).subscribe();
    await sleep(100);
    subscription.unsubscribe();
    await sleep(50);
    assert.equal(contextOf(locks).waiters.channelCount, 0);
    assert.equal(await firstValueFrom(rx.tryAcquire({ permits: 1 })), true, 'no reservation left behind');
    await firstValueFrom(rx.release(2));
    assert.equal(await firstValueFrom(rx.drainPermits()), 2);
  });

  it('PermitExpirableSemaphore: acquire emits the id; tryRelease a boolean', async () => {
    const rx = toRx(server.lockClient().getPermitExpirableSemaphore('rx-expirable'));
    await firstValueFrom(rx.trySetPermits(1));
    const id = await firstValueFrom(rx.acquire({ leaseTime: 5_000 }));
    assert.equal(typeof id, 'string');
    assert.equal(await firstValueFrom(rx.tryAcquire()), null);
    assert.equal(await firstValueFrom(rx.updateLeaseTime(id, 10_000)), true);
    assert.equal(await firstValueFrom(rx.tryRelease(id)), true);
    await assert.rejects(firstValueFrom(rx.release(id)), { name: 'LockNotHeldError' });
  });
});

describe('toRx: every primitive', () => {
  it('mirrors every method of every primitive the client hands out', () => {
    const locks: LockClient = server.lockClient();
    const factories: [string, () => object][] = [
      ['getLock', () => locks.getLock('all')],
      ['getFairLock', () => locks.getFairLock('all')],
      ['getSpinLock', () => locks.getSpinLock('all')],
      ['getFencedLock', () => locks.getFencedLock('all')],
      ['getReadWriteLock', () => locks.getReadWriteLock('all')],
      ['readLock', () => locks.getReadWriteLock('all').readLock()],
      ['writeLock', () => locks.getReadWriteLock('all').writeLock()],
      ['getSemaphore', () => locks.getSemaphore('all')],
      ['getPermitExpirableSemaphore', () => locks.getPermitExpirableSemaphore('all')],
      ['getCountDownLatch', () => locks.getCountDownLatch('all')],
      ['getStripedLock', () => locks.getStripedLock('all', 4)],
      ['getMultiLock', () => locks.getMultiLock(locks.getLock('a'), locks.getLock('b'))],
      ['getRedLock', () => locks.getRedLock(locks.getLock('a'), locks.getLock('b'), locks.getLock('c'))],
    ];
    for (const [factory, create] of factories) {
      const primitive = create();
      const rx = toRx(primitive) as Record<string, unknown>;
      const expected = methodNames(primitive);
      assert.ok(expected.length > 0, factory);
      assert.deepEqual(Object.keys(rx).sort(), expected, factory);
      for (const name of expected) assert.equal(typeof rx[name], 'function', `${factory}: ${name}`);
    }
  });

  it('FencedLock and CountDownLatch: values and aborted waits', async () => {
    const locks = server.lockClient();
    const fenced = toRx(locks.getFencedLock('rx-fenced'));
    const token = await firstValueFrom(fenced.lockAndGetToken());
    assert.equal(typeof token, 'bigint');
    await firstValueFrom(fenced.unlock());
    const latch = toRx(locks.getCountDownLatch('rx-latch'));
    assert.equal(await firstValueFrom(latch.trySetCount(1)), true);
    const subscription = latch.await().subscribe();
    await sleep(100);
    subscription.unsubscribe();
    await sleep(50);
    assert.equal(contextOf(locks).waiters.channelCount, 0, 'unsubscribing aborted the await');
    await firstValueFrom(latch.countDown());
    assert.equal(await firstValueFrom(latch.await({ waitTime: 1_000 })), true);
  });

  it('refuses a non-object', () => {
    assert.throws(() => toRx(null as unknown as object), { name: 'TypeError', message: /`primitive`/ });
  });
});

describe('rxjs stays optional', () => {
  const root = fileURLToPath(new URL('..', import.meta.url));
  // A resolve hook that fails any import of rxjs, registered after tsx so that it sees every import.
  const hook = `data:text/javascript,${encodeURIComponent(
    'export async function resolve(s, c, next) { if (s === "rxjs" || s.startsWith("rxjs/")) throw new Error("rxjs was loaded"); return next(s, c); }',
  )}`;
  const run = (entry: string): string =>
    execFileSync(
      process.execPath,
      [
        '--import',
        'tsx',
        '--input-type=module',
        '-e',
        `import { register } from 'node:module'; register(${JSON.stringify(hook)}); const m = await import(${JSON.stringify(entry)}); console.log(Object.keys(m).length > 0 ? 'ok' : 'empty');`,
      ],
      { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] },
    ).trim();

  it('importing the package root never loads rxjs', () => {
    assert.equal(run(`${root}src/index.ts`), 'ok');
  });

  it('(the check works: importing latchkey/rx does load it)', () => {
    assert.throws(() => run(`${root}src/rx.ts`), /rxjs was loaded/);
  });
});
