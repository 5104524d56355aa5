/**
 * Errors thrown by latchkey. Each has a stable `code`; `instanceof` works across the ESM and
 * CommonJS copies of the package because the check uses a global `Symbol.for` brand rather than
 * class identity.
 */
const BRAND = Symbol.for('latchkey.error');

/** Base class of every latchkey error. */
export class LatchkeyError extends Error {
  /** Stable machine-readable code, e.g. `LATCHKEY_LOCK_NOT_HELD`. */
  readonly code: string;

  constructor(code: string, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
    // The codes of the class and of every latchkey class above it: what `instanceof` checks.
    const codes: string[] = [];
    for (let type = new.target as unknown; type !== LatchkeyError; type = Object.getPrototypeOf(type)) {
      const own = (type as { CODE?: string }).CODE;
      if (own !== undefined && !codes.includes(own)) codes.push(own);
    }
    Object.defineProperty(this, BRAND, { value: Object.freeze(codes) });
  }

  /** `instanceof` by the error's codes, so that it works across the ESM and CommonJS copies of latchkey. */
  static override [Symbol.hasInstance](value: unknown): boolean {
    if (typeof value !== 'object' || value === null || !(BRAND in value)) return false;
    // The base class matches every branded error; a subclass matches its own code and its subclasses'.
    if (this === LatchkeyError) return true;
    const codes = (value as Record<symbol, unknown>)[BRAND];
    return Array.isArray(codes) && codes.includes((this as unknown as { CODE?: string }).CODE);
  }
}

/**
 * Unlock (or another owner-only operation) by an owner that does not hold the lock or permit:
 * Redisson's IllegalMonitorStateException.
 */
export class LockNotHeldError extends LatchkeyError {
  /** The `code` of every error of this class (a LockLostError has its own). */
  static readonly CODE: string = 'LATCHKEY_LOCK_NOT_HELD';
  constructor(message: string, options?: ErrorOptions) {
    super(new.target.CODE, message, options);
  }
}

/**
 * A held lock was lost: renewal found it gone, or renewal kept failing past its lease. It is a
 * LockNotHeldError too: `unlock()` of a lost lock rejects with it, and code that catches
 * LockNotHeldError (as Redisson code catches IllegalMonitorStateException) still catches it.
 */
export class LockLostError extends LockNotHeldError {
  /** The `code` of every error of this class. */
  static override readonly CODE: string = 'LATCHKEY_LOCK_LOST';
}

/** `waitTime` elapsed before the lock could be acquired (from `withLock` and `acquire`). */
export class LockAcquireTimeoutError extends LatchkeyError {
  /** The `code` of every error of this class. */
  static readonly CODE = 'LATCHKEY_ACQUIRE_TIMEOUT';
  constructor(message: string, options?: ErrorOptions) {
    super(LockAcquireTimeoutError.CODE, message, options);
  }
}

/** Why one member of a MultiLock / RedLock failed: in an attempt (QuorumError), or a release (MemberReleaseError). */
export interface MemberFailure {
  /** Position of the member in the `getMultiLock` / `getRedLock` arguments. */
  readonly index: number;
  /** The member lock's name (members of a RedLock often share one). */
  readonly name: string;
  /**
   * `busy`: held by someone else. `timeout`: no reply in time, so its outcome is unknown (a member
   * taken so is given back). `error`: Redis refused, or could not be reached. `not-held`: a release
   * found it no longer held (it expired, or was taken).
   */
  readonly reason: 'busy' | 'timeout' | 'error' | 'not-held';
  /** The error the member's call failed with, if any. */
  readonly error?: unknown;
}

/** The `LockClient` was shut down: it takes no new calls, and its pending waits end with this. */
export class ShutDownError extends LatchkeyError {
  /** The `code` of every error of this class. */
  static readonly CODE = 'LATCHKEY_SHUT_DOWN';
  constructor(message: string, options?: ErrorOptions) {
    super(ShutDownError.CODE, message, options);
  }
}

/** Redis could not be reached, or did not answer in time. The original error is the `cause`. */
export class RedisUnavailableError extends LatchkeyError {
  /** The `code` of every error of this class (a QuorumError has its own). */
  static readonly CODE: string = 'LATCHKEY_REDIS_UNAVAILABLE';
  /**
   * True when the call was sent and no reply came in time: Redis may have run it. (False: it was
   * refused or never sent, so it did nothing.)
   */
  readonly outcomeUnknown: boolean;
  constructor(message: string, options?: ErrorOptions & { readonly outcomeUnknown?: boolean }) {
    super(new.target.CODE, message, options);
    this.outcomeUnknown = options?.outcomeUnknown ?? false;
  }
}

/**
 * A MultiLock could not reach all of its members, or a RedLock a majority: too many members' servers
 * failed (not busy: a busy member is waited for). It is a RedisUnavailableError too: a failure to
 * reach Redis is never reported as "held by someone else".
 */
export class QuorumError extends RedisUnavailableError {
  /** The `code` of every error of this class. */
  static override readonly CODE: string = 'LATCHKEY_QUORUM';
  /** Why each member that was not taken failed. */
  readonly failures: readonly MemberFailure[];
  constructor(message: string, failures: readonly MemberFailure[], options?: ErrorOptions) {
    super(message, options);
    this.failures = failures;
  }
}

/** Some members of a MultiLock / RedLock could not be released; the others were. */
export class MemberReleaseError extends LatchkeyError {
  /** The `code` of every error of this class. */
  static readonly CODE = 'LATCHKEY_MEMBER_RELEASE';
  /** Why each member that was not released failed. */
  readonly failures: readonly MemberFailure[];
  constructor(message: string, failures: readonly MemberFailure[]) {
    super(MemberReleaseError.CODE, message);
    this.failures = failures;
  }
}

/**
 * Redis refused a command latchkey needs for an option the client asked for (an ACL that denies
 * it, a managed service that does not offer it): `WAIT` for `replicaAcks`. Never retried, since a
 * refused command is refused again; whatever the call had been granted is given back.
 */
export class CommandRefusedError extends LatchkeyError {
  /** The `code` of every error of this class. */
  static readonly CODE = 'LATCHKEY_COMMAND_REFUSED';
  /** The command Redis refused, as sent (`WAIT`, `CLIENT TRACKING`). */
  readonly command: string;
  constructor(command: string, message: string, options?: ErrorOptions) {
    super(CommandRefusedError.CODE, message, options);
    this.command = command;
  }
}
