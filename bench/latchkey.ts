/**
 * latchkey as its users run it: the built package (dist/), like the peers' published JavaScript,
 * not the TypeScript sources through tsx, whose transform adds work of its own to every closure.
 * `npm run bench` builds first.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type * as Sources from '../src/index.js';

const built = new URL('../dist/index.mjs', import.meta.url);
if (!existsSync(fileURLToPath(built))) throw new Error('dist/ is missing: run `npm run build` before the benchmark');
const latchkey = (await import(built.href)) as typeof Sources;

export const { LockClient, LockLostError } = latchkey;
export type LockClient = Sources.LockClient;
export type Lock = Sources.Lock;
export type LockLease = Sources.LockLease;
