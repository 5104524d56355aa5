// The public API of `latchkey`: the client, the primitives' types, the errors, the Redis port and
// the diagnostics channels. Everything else in src/ is internal.
export { LockClient, type LockClientEvents } from './client.js';
export {
  DEFAULTS,
  type LockClientOptions,
  type LockOptions,
  type ResolvedOptions,
  type TryLockOptions,
} from './options.js';
export type { Lock } from './lock.js';
export { LockLease } from './lease.js';
export type { ReadWriteLock } from './primitives/read-write-lock.js';
export type { CountDownLatch, AwaitOptions } from './primitives/count-down-latch.js';
export type { StripedLock } from './primitives/striped-lock.js';
export type { FencedLock } from './primitives/fenced-lock.js';
export { SPIN_BACKOFF_DEFAULTS, type SpinBackoff } from './primitives/spin-lock.js';
export type { Semaphore, SemaphoreAcquireOptions, SemaphoreTryAcquireOptions } from './primitives/semaphore.js';
export type {
  PermitExpirableSemaphore,
  PermitAcquireOptions,
  PermitTryAcquireOptions,
} from './primitives/permit-expirable-semaphore.js';
export {
  CommandRefusedError,
  LatchkeyError,
  LockAcquireTimeoutError,
  LockLostError,
  LockNotHeldError,
  MemberReleaseError,
  QuorumError,
  RedisUnavailableError,
  ShutDownError,
  type MemberFailure,
} from './errors.js';
export type {
  ChannelListener,
  LuaScript,
  RedisConnection,
  ScriptArg,
  ScriptReply,
  TrackingLink,
} from './redis/connection.js';
export type { RedisClientLike } from './redis/to-connection.js';
export { bunRedisConnection } from './redis/bun-adapter.js';
export { channels as diagnosticsChannels, type LatchkeyWarning, type LockKind } from './diagnostics.js';
export { MAX_DURATION_MS, MIN_LEASE_MS } from './validate.js';
