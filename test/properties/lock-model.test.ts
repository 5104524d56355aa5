import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { LockLostError, LockNotHeldError, type Lock } from '../../src/index.js';
import { assertNoKeyWithoutTtl } from '../../harness/keys.js';
import { startServer } from '../../harness/server.js';
import { Actor } from './actor.js';

/**
 * Model-based run of the re-entrant Lock on a real server: random sequences of calls by four
 * callers against a model that is one line of state, who holds the lock and how many times.
 * Callers 0 and 1 are two scopes of one client sharing one handle (as concurrent requests share a
 * module-level handle), 2 a scope of a second client: each re-enters. Caller 3 uses a handle of the
 * second client outside any scope: every acquisition is a new owner (docs/guarantees.md, 2), so it never re-enters,
 * and its unlock() releases the acquisition it made.
 */
const server = await startServer();
const clients = [server.lockClient(), server.lockClient()] as const;
const checker = server.client();

interface Model {
  holder: number | undefined;
  count: number;
  /** Holders whose lock forceUnlock() deleted: each believes it holds it until it learns. */
  forced: Set<number>;
}

interface Real {
  /** Each caller's scope; undefined: the caller outside any scope. */
  readonly actors: readonly (Actor | undefined)[];
  /** The handle each caller uses (callers 0 and 1 share one). */
  readonly handles: readonly Lock[];
}

const OUTSIDE = 3;
const as = <T>(r: Real, caller: number, fn: () => Promise<T>): Promise<T> => r.actors[caller]?.run(fn) ?? fn();

type Cmd = fc.AsyncCommand<Model, Real>;

const holds = (m: Model, actor: number): number => (m.holder === actor ? m.count : 0);

class TryLock implements Cmd {
  constructor(readonly actor: number) {}
  check = (): boolean => true;
  async run(m: Model, r: Real): Promise<void> {
    const got = await as(r, this.actor, () => r.handles[this.actor]!.tryLock());
    const free = m.holder === undefined || (m.holder === this.actor && this.actor !== OUTSIDE);
    assert.equal(got, free, `tryLock by ${this.actor} while ${m.holder ?? 'nobody'} holds ${m.count}`);
    if (got) [m.holder, m.count] = [this.actor, m.count + 1];
    // A forced holder that tries again, in its scope, learns its hold is gone: the hold is
    // forgotten (and, when the lock was free, taken afresh). Outside a scope it is a new owner.
    if (this.actor !== OUTSIDE) m.forced.delete(this.actor);
  }
  toString = (): string => `tryLock(${this.actor})`;
}

class Unlock implements Cmd {
  constructor(readonly actor: number) {}
  check = (): boolean => true;
  async run(m: Model, r: Real): Promise<void> {
    const outcome = await as(r, this.actor, () => r.handles[this.actor]!.unlock()).then(
      () => 'released',
      (error: unknown) =>
        error instanceof LockLostError ? 'lost' : error instanceof LockNotHeldError ? 'not held' : error,
    );
    if (m.holder !== this.actor && m.forced.has(this.actor)) {
      // Its lock was deleted behind it: unlock tells it so, once.
      m.forced.delete(this.actor);
      return assert.equal(outcome, 'lost');
    }
    if (m.holder !== this.actor) return assert.equal(outcome, 'not held');
    assert.equal(outcome, 'released');
    m.count--;
    if (m.count === 0) m.holder = undefined;
  }
  toString = (): string => `unlock(${this.actor})`;
}

class Inspect implements Cmd {
  constructor(readonly actor: number) {}
  check = (): boolean => true;
  async run(m: Model, r: Real): Promise<void> {
    const handle = r.handles[this.actor]!;
    const [count, held, locked, ttl] = await as(r, this.actor, () =>
      Promise.all([handle.getHoldCount(), handle.isHeldByCurrentOwner(), handle.isLocked(), handle.remainTimeToLive()]),
    );
    // Outside a scope there is no "current owner" to count holds for (docs/guarantees.md, 2).
    if (this.actor !== OUTSIDE) {
      assert.equal(count, holds(m, this.actor), 'getHoldCount()');
      assert.equal(held, holds(m, this.actor) > 0, 'isHeldByCurrentOwner()');
    }
    assert.equal(locked, m.holder !== undefined, 'isLocked()');
    assert.ok(m.holder === undefined ? ttl === -2 : ttl > 0, `remainTimeToLive() ${ttl}`);
  }
  toString = (): string => `inspect(${this.actor})`;
}

class ForceUnlock implements Cmd {
  check = (): boolean => true;
  async run(m: Model, r: Real): Promise<void> {
    assert.equal(await r.handles[2]!.forceUnlock(), m.holder !== undefined, 'forceUnlock()');
    if (m.holder !== undefined) m.forced.add(m.holder);
    [m.holder, m.count] = [undefined, 0];
  }
  toString = (): string => 'forceUnlock()';
}

const actor = fc.integer({ min: 0, max: OUTSIDE });
const commands = fc.commands(
  [
    actor.map((a) => new TryLock(a)),
    actor.map((a) => new Unlock(a)),
    actor.map((a) => new Inspect(a)),
    fc.constant(new ForceUnlock()),
  ],
  { maxCommands: 30 },
);

test(
  'Lock against an in-memory model: tryLock, unlock, hold counts, forceUnlock by four callers',
  { timeout: 120_000 },
  async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(commands, async (cmds) => {
        const name = `model-lock-${run++}`;
        const shared = clients[0].getLock(name);
        const real: Real = {
          actors: [new Actor(clients[0]), new Actor(clients[0]), new Actor(clients[1]), undefined],
          handles: [shared, shared, clients[1].getLock(name), clients[1].getLock(name)],
        };
        try {
          await fc.asyncModelRun(
            () => ({ model: { holder: undefined, count: 0, forced: new Set<number>() }, real }),
            cmds,
          );
        } finally {
          await real.handles[2]!.forceUnlock();
          await Promise.all(real.actors.map((a) => a?.close() ?? Promise.resolve()));
        }
      }),
      { numRuns: 200, includeErrorInReport: true },
    );
    await assertNoKeyWithoutTtl(checker);
  },
);
