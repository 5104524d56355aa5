/**
 * The clock latchkey measures leases, deadlines and pauses on: epoch ms in whole numbers, read
 * from the monotonic clock. A step of the wall clock (NTP correcting it, a VM resumed, an
 * operator) then neither stretches a lease this client believes it holds past the one Redis counts
 * down, nor cuts it short. Whole ms, since values derived from it are sent to Redis.
 */
const origin = performance.timeOrigin;

export const now = (): number => Math.floor(origin + performance.now());
