/**
 * Names of the rows that are no library: what the machine (or latchkey's own scripts) allows, run
 * next to the libraries as bounds. Shared by the scenarios that measure them and the target checks
 * that read them, which must not load the libraries themselves.
 */

/** Scenario 1: two bare EVALSHA round trips (take a key if absent, give it back), nothing else. */
export const FLOOR_TWO_SCRIPTS = 'floor (2 x EVALSHA)';

/**
 * Scenario 1: latchkey's own two lock scripts (acquire, release) with the keys and arguments it
 * sends, through bare ioredis: what latchkey would do with none of its JavaScript.
 */
export const FLOOR_LOCK_SCRIPTS = 'floor: lock scripts, bare';

/** Scenario 3: the turn passed round a ring of processes by one SPUBLISH each. */
export const HAND_OVER_RING = 'floor: hand-over ring';

/** Scenario 5: one bare script sent to `servers` servers at once. */
export const floorOnServers = (servers: number): string => `floor (EVALSHA on ${servers})`;

/** Rows that bound a target; no peer, never a bar. */
export const isFloor = (library: string): boolean => library.startsWith('floor');
