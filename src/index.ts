export { LockClient, type LockClientEvents } from './client.js';
export { DEFAULTS, type LockClientOptions, type LockOptions, type ResolvedOptions, type TryLockOptions } from './options.js';
export type { Lock, LockLease } from './lock.js';
export {
  LatchkeyError,
  LockAcquireTimeoutError,
  LockLostError,
  LockNotHeldError,
  QuorumError,
  RedisUnavailableError,
  type MemberFailure,
} from './errors.js';
export type { LuaScript, RedisConnection, ScriptArg, ScriptReply } from './redis/connection.js';
export { channels as diagnosticsChannels } from './diagnostics.js';
