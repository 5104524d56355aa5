/**
 * A semaphore acquisition whose grant's reply was lost, and whose calls then kept failing until the
 * wait gave up, gives its permits back (docs/guarantees.md, 3.2 Retries are harmless: no permit
 * lost). Its give-up reaches Redis more than twice commandTimeout after the grant: the granted
 * attempt fails after one commandTimeout, failures are ridden out for one more, and the attempt
 * that ends the wait was sent after a pause; so Redis must remember the grant longer than that.
 */
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { eventually } from '../../harness/eventually.js';
import { startServer, type TestServer } from '../../harness/server.js';
import type { TcpProxy } from '../../harness/tcp-proxy.js';
import { RedisUnavailableError } from '../../src/index.js';
import { MAX_RETRY_PAUSE_MS } from '../../src/redis/script-runner.js';
import { outcome, proxiedLockClient, show, sleep, startProxy } from './helpers.js';

let server: TestServer;
let proxy: TcpProxy;
before(async () => {
  server = await startServer();
  proxy = await startProxy(server);
});

const COMMAND_TIMEOUT_MS = 150;

describe('a semaphore wait that fails after its grant was lost', { timeout: 20_000 }, () => {
  it('gives the permits back, though its give-up comes after twice commandTimeout', async () => {
    const { locks } = await proxiedLockClient(server, proxy, { commandTimeout: COMMAND_TIMEOUT_MS });
    const admin = server.lockClient();
    const name = 'late-give-up';
    // Scripts loaded and the wait's channel subscribed first, so that the stalled attempt is a grant
    // (a NOSCRIPT reply held back would only delay the first run of the script).
    assert.equal(await locks.getSemaphore(name).tryAcquire({ waitTime: 20 }), false);
    await admin.getSemaphore(name).addPermits(1);
    // Requests flow, replies are held: every call runs in Redis and none is answered in time.
    proxy.stall('down');
    let waited: Awaited<ReturnType<typeof outcome>>;
    try {
      waited = await outcome(locks.getSemaphore(name).tryAcquire({ waitTime: 10_000 }));
      // The give-up is sent as the wait fails (not awaited: Redis looked unreachable); let it run.
      await sleep(100);
    } finally {
      proxy.resume('down');
    }
    assert.ok(
      !waited.ok && waited.error instanceof RedisUnavailableError,
      `the wait ended without failing: ${waited.ok ? String(waited.value) : show(waited.error)}`,
    );
    // The first attempt was granted in Redis; the give-up must have found that grant and undone it.
    const semaphore = admin.getSemaphore(name);
    await eventually(
      async (note) => {
        const available = await semaphore.availablePermits();
        note(`available permits: ${available}`);
        return available === 1;
      },
      2_000,
      'the granted permit given back',
    );
  });

  it('remembers the grant past a retry pause longer than commandTimeout, the longest after fast failures', async () => {
    // model/semaphore.pml (P=2) found it: failures that come at once (a refused connection, BUSY)
    // grow the retry pause to MAX_RETRY_PAUSE_MS, more than a commandTimeout this short, so the
    // give-up of a wait can come after five commandTimeouts.
    const locks = server.lockClient({ commandTimeout: COMMAND_TIMEOUT_MS });
    const name = 'grant-memory';
    await locks.getSemaphore(name).trySetPermits(1);
    await locks.getSemaphore(name).acquire();
    const remembered = await server.client().pttl(`latchkey:{${name}}:semaphore:grants`);
    const needed = 5 * COMMAND_TIMEOUT_MS + MAX_RETRY_PAUSE_MS;
    assert.ok(remembered > needed - 200 && remembered <= needed, `grants remembered ${remembered} ms, need ${needed}`);
  });
});
