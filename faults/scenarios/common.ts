/**
 * What the scenarios share: the usual resource and contention, and the styles with a lease signal.
 */
import type { Primitive, ResourceSpec, Style } from '../protocol.js';

/** Styles that give the holder a lease signal (and a token, on a fenced lock). */
export const SIGNALLED: readonly Style[] = ['withLock', 'acquire'];

const STYLES: Partial<Record<Primitive, readonly Style[]>> = {
  'fenced-lock': ['acquire', 'token'],
  semaphore: ['permit', 'try-permit'],
  'red-lock': ['withLock', 'acquire', 'lock'],
  none: ['bare'],
};

/**
 * A resource with the usual contention: 3 tasks per worker, 2 of them sharing one handle
 * (docs/guarantees.md, 2: concurrent tasks on one handle exclude each other), short sections,
 * every API style in turn.
 */
export function resource(primitive: Primitive, over: Partial<ResourceSpec> = {}): ResourceSpec {
  return {
    name: primitive === 'none' ? 'unlocked' : primitive,
    primitive,
    tasks: primitive === 'read-write-lock' ? 4 : 3,
    shared: 2,
    styles: STYLES[primitive] ?? ['withLock', 'acquire', 'lock'],
    holdMs: [1, 6],
    thinkMs: [0, 4],
    ...(primitive === 'semaphore' ? { permits: 2, waitTimeMs: 2_000 } : {}),
    ...over,
  };
}
