// Fencing tokens: how a resource refuses a stale writer.
//
// A lock alone cannot stop a holder that stalled past its lease (a GC pause, a slow disk, a network
// partition): by the time it wakes up, another process holds the lock, and its late write would
// overwrite the newer one. A FencedLock gives every new holder a larger token. The resource keeps
// the largest token it has accepted and refuses any write that carries a smaller one. The check
// belongs to the resource (the database, the file service), not to the lock client.
import assert from 'node:assert/strict';
import { Redis } from 'ioredis';
import { LockClient, LockLostError } from 'latchkey';

/**
 * The protected resource. In SQL the same rule is one statement:
 * `UPDATE reports SET body = $1, fence = $2 WHERE id = $3 AND fence <= $2` (0 rows: refused).
 */
class ReportStore {
  #body = '';
  #fence = 0n;

  write(body: string, token: bigint): boolean {
    if (token < this.#fence) return false; // a holder older than one we already served
    this.#fence = token;
    this.#body = body;
    return true;
  }

  get body(): string {
    return this.#body;
  }
}

const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const redisA = new Redis(url);
const redisB = new Redis(url);
const workerA = new LockClient(redisA); // think: two processes on two machines
const workerB = new LockClient(redisB);
const store = new ReportStore();
const name = 'report:2026-q4';

// A takes the lock with a short lease and writes.
const lockA = workerA.getFencedLock(name);
const tokenA = await lockA.lockAndGetToken({ leaseTime: 200 });
assert.equal(store.write('draft by A', tokenA), true);

// A stalls longer than its lease; the lock expires and B takes it with a larger token.
await new Promise((resolve) => setTimeout(resolve, 300));
const lockB = workerB.getFencedLock(name);
const tokenB = await lockB.lockAndGetToken();
assert.ok(tokenB > tokenA);
assert.equal(store.write('final by B', tokenB), true);

// A wakes up and writes with its old token: the resource refuses it.
const accepted = store.write('late write by A', tokenA);
assert.equal(accepted, false);
assert.equal(store.body, 'final by B');
console.log(`token A ${tokenA}, token B ${tokenB}: stale write by A refused; the report says "${store.body}"`);

// A also learns that it lost the lock: unlocking it rejects with LockLostError.
await assert.rejects(lockA.unlock(), LockLostError);
await lockB.unlock();

await Promise.all([workerA.shutdown(), workerB.shutdown()]);
redisA.disconnect();
redisB.disconnect();
