import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import type { Semaphore } from '../../src/index.js';
import { assertNoKeyWithoutTtl } from '../../harness/keys.js';
import { startServer } from '../../harness/server.js';

/**
 * Model-based run of the Semaphore on a real server: random sequences of calls through two
 * clients against a model that is one number, the available permits (undefined: never set). The
 * permit count is the semaphore's documented persistent key; nothing else may stay without a TTL.
 */
const server = await startServer();
const clients = [server.lockClient(), server.lockClient()] as const;
const checker = server.client();

interface Model {
  permits: number | undefined;
}

type Real = readonly Semaphore[];
type Cmd = fc.AsyncCommand<Model, Real>;

const available = (m: Model): number => m.permits ?? 0;

/** A command by client `via`, checked against the model. */
function cmd(label: string, via: number, run: (m: Model, s: Semaphore) => Promise<void>): Cmd {
  return {
    check: () => true,
    run: (m, r) => run(m, r[via]!),
    toString: () => `${label} via client ${via}`,
  };
}

const via = fc.integer({ min: 0, max: 1 });
const permits = fc.integer({ min: 1, max: 4 });
const commands = fc.commands(
  [
    fc.tuple(via, fc.integer({ min: 0, max: 4 })).map(([c, n]) =>
      cmd(`trySetPermits(${n})`, c, async (m, s) => {
        assert.equal(await s.trySetPermits(n), m.permits === undefined, 'trySetPermits()');
        m.permits ??= n;
      }),
    ),
    fc.tuple(via, permits).map(([c, n]) =>
      cmd(`tryAcquire({ permits: ${n} })`, c, async (m, s) => {
        const enough = available(m) >= n;
        assert.equal(await s.tryAcquire({ permits: n }), enough, 'tryAcquire()');
        if (enough) m.permits = available(m) - n;
      }),
    ),
    fc.tuple(via, permits).map(([c, n]) =>
      cmd(`release(${n})`, c, async (m, s) => {
        await s.release(n);
        m.permits = available(m) + n;
      }),
    ),
    fc.tuple(via, fc.integer({ min: -3, max: 3 })).map(([c, n]) =>
      cmd(`addPermits(${n})`, c, async (m, s) => {
        await s.addPermits(n);
        m.permits = available(m) + n;
      }),
    ),
    via.map((c) =>
      cmd('drainPermits()', c, async (m, s) => {
        const taken = Math.max(0, available(m));
        assert.equal(await s.drainPermits(), taken, 'drainPermits()');
        if (taken > 0) m.permits = 0;
      }),
    ),
    via.map((c) =>
      cmd('availablePermits()', c, async (m, s) => {
        assert.equal(await s.availablePermits(), available(m), 'availablePermits()');
      }),
    ),
  ],
  { maxCommands: 30 },
);

test(
  'Semaphore against an in-memory model: set, take, give, add, drain through two clients',
  { timeout: 120_000 },
  async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(commands, async (cmds) => {
        const name = `model-semaphore-${run++}`;
        const real = clients.map((c) => c.getSemaphore(name));
        await fc.asyncModelRun(() => ({ model: { permits: undefined }, real }), cmds);
      }),
      { numRuns: 200, includeErrorInReport: true },
    );
    await assertNoKeyWithoutTtl(checker, [/:semaphore:permits$/]);
  },
);
