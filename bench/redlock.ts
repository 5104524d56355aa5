/**
 * redlock 5 (beta) ships typings its package.json "exports" map does not point at, so NodeNext
 * resolution cannot find them: import the module untyped and give it its own declared type.
 */
// @ts-expect-error -- see above: the runtime module is fine, only its typings are unreachable.
import RedlockModule from 'redlock';
import type RedlockTyped from '../node_modules/redlock/dist/index.js';

export const Redlock = RedlockModule as typeof RedlockTyped;
export type Redlock = RedlockTyped;
