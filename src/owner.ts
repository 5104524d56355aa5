/**
 * Owners: random client and owner ids, and the async context (AsyncLocalStorage) that says whom a
 * call acquires as inside a withLock() callback or a scope().
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomBytes, randomFillSync } from 'node:crypto';

/** A random, unguessable id (128 bits by default) in URL-safe base64: client ids. */
export function randomId(bytes = 16): string {
  return randomBytes(bytes).toString('base64url');
}

/** Random bytes drawn from `crypto` a pool at a time: every `lock()` takes a new owner id. */
const pool = Buffer.alloc(4096);
let poolUsed = pool.length;

/** A new owner id: 96 random bits from `crypto`, 16 characters of URL-safe base64. */
export function newOwnerId(): string {
  if (poolUsed + 12 > pool.length) {
    randomFillSync(pool);
    poolUsed = 0;
  }
  poolUsed += 12;
  return pool.toString('base64url', poolUsed - 12, poolUsed);
}

/**
 * Who the current async context acquires as: inside `scope()`, its owner for every lock; inside a
 * `withLock()` callback, the holder's owner for the locks that hold it (by identity, see
 * LockCore.identities). Set only with `AsyncLocalStorage.run()`, so it follows the call nesting:
 * two parallel tasks inside one `withLock(A)` share A's owner, but each takes lock B as its own.
 */
interface OwnerContext {
  readonly scope: string | undefined;
  readonly held: ReadonlyMap<string, string>;
}

const context = new AsyncLocalStorage<OwnerContext>();

/**
 * The owner an acquisition of the lock with these identities re-enters as, if any: the holder
 * whose callback runs (also inside a scope opened in that callback), else the scope's owner.
 */
export function contextOwner(identity: string): string | undefined {
  const current = context.getStore();
  if (current === undefined) return undefined;
  return current.held.get(identity) ?? current.scope;
}

/** True inside `LockClient.scope()`. */
export function inScope(): boolean {
  return context.getStore()?.scope !== undefined;
}

/** Runs `fn` as the scope owner `owner` (every lock taken inside re-enters for it). */
export function runInScope<T>(owner: string, fn: () => T): T {
  return context.run({ scope: owner, held: context.getStore()?.held ?? new Map() }, fn);
}

/** Runs `fn` (a holder's callback) with the locks of `identities` held by `owner`. */
export function runHolding<T>(identities: readonly string[], owner: string, fn: () => T): T {
  const current = context.getStore();
  const held = new Map(current?.held);
  for (const identity of identities) held.set(identity, owner);
  return context.run({ scope: current?.scope, held }, fn);
}
