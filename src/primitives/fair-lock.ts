/**
 * FairLock (getFairLock): the re-entrant lock under its Redisson name, granted in request order.
 */
import type { ClientContext } from '../context.js';
import { KeyLock } from '../engine/key-lock.js';
import { LockHandle } from '../engine/lock-handle.js';
import type { Lock } from '../lock.js';
import { lockBackend } from './reentrant-lock.js';

/**
 * Creates the fair lock returned by `LockClient.getFairLock()` (Redisson's RFairLock): granted in
 * request order across clients and processes. It is the re-entrant lock's own queue, not a second
 * one: waiters queue in Redis in the order they asked; a release hands the lock to the first live
 * waiter and wakes it by name; a waiter refreshes its place every third of `fairWaiterTimeout`
 * and the place of one that stopped (its process died) lapses after it; aborting or a `waitTime`
 * that runs out gives the place up at once; a one-shot `tryLock()` neither queues nor takes the
 * lock ahead of a live waiter. Sharing the queue keeps one order when `getLock()` and
 * `getFairLock()` handles of one name are mixed.
 */
export function createFairLock(ctx: ClientContext, name: string): Lock {
  return new LockHandle(new KeyLock(ctx, lockBackend(ctx, name, 'fair-lock', { queue: true })));
}
