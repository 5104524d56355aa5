import { AsyncLocalStorage } from 'node:async_hooks';
import { randomBytes } from 'node:crypto';

/** A random, unguessable id (128 bits by default) in URL-safe base64. */
export function randomId(bytes = 16): string {
  return randomBytes(bytes).toString('base64url');
}

/**
 * The owner of the current async context: set by `LockClient.scope()` and `withLock()`, so that
 * every lock taken inside them, on any handle, belongs to one owner and re-enters.
 */
const scopeOwner = new AsyncLocalStorage<string>();

/** The owner id of the enclosing scope, if any. */
export function currentScopeOwner(): string | undefined {
  return scopeOwner.getStore();
}

/** Runs `fn` with `owner` as the scope owner. */
export function runAsOwner<T>(owner: string, fn: () => T): T {
  return scopeOwner.run(owner, fn);
}
