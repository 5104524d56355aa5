/**
 * The re-entrant lock's Redis protocol (hash, queue, hand-over by ticket), shared by Lock,
 * FairLock, SpinLock and FencedLock; getLock() is made here.
 */
import { now } from '../clock.js';
import type { ClientContext } from '../context.js';
import type { LockKind } from '../diagnostics.js';
import type { Acquisition, Attempt } from '../engine/acquire.js';
import { KeyLock } from '../engine/key-lock.js';
import { LockHandle } from '../engine/lock-handle.js';
import type { Grant, LockBackend, LockStatus } from '../engine/lock-core.js';
import { provenUntil } from '../engine/liveness.js';
import { lockHashKey, lockKeys } from '../keys.js';
import { MIN_CALL_MS, runUntilKnown } from '../redis/script-runner.js';
import {
  fencedLockIssue,
  lockAcquire,
  lockCheck,
  lockForceUnlock,
  lockLeave,
  lockReenter,
  lockRelease,
  lockRenew,
  lockStatus,
} from '../scripts/index.js';
import { newOwnerId } from '../owner.js';

/** How long giving up a place may take before the waiter leaves it to lapse. */
const LEAVE_TIMEOUT_MS = 1_000;

/** Names one wait among this process's waits in hand-over messages: unique, not secret. */
let waitCount = 0;

/** How an acquisition of the re-entrant lock waits. */
export type LockWaitStyle =
  /** Queues in Redis and is handed the lock by name (Lock, FairLock, FencedLock). */
  | { readonly queue: true }
  /** Polls with `pause(retry)` ms between tries (SpinLock). */
  | { readonly queue: false; readonly pause: (retry: number) => number };

/**
 * The re-entrant lock (Redisson's RLock) in Redis: one hash per lock, field = owner, value = hold
 * count, expiring with the lease; plus a short-lived queue of the owners waiting for it.
 *
 * The last release hands the lock to the first live waiter and tells it by name, so waiting is
 * event-driven without a herd, and a process that releases and asks again queues behind those
 * already waiting instead of barging ahead of them. The hand-over is the waiter's acquisition
 * only while it is provably still held for it: the reservation started after the waiter sent the
 * attempt whose ticket the message names, so it lasts at least until that moment plus the
 * reservation. A message that comes later than that (a stalled connection, a server that paused
 * after the release) proves nothing: the waiter asks Redis instead. A waiter refreshes its place
 * every third of `fairWaiterTimeout`; a dead one's place lapses.
 */
export function lockBackend(
  ctx: ClientContext,
  name: string,
  kind: LockKind,
  style: LockWaitStyle,
  /** A FencedLock's token counter: every grant gets the holder's fencing token. */
  fence?: string,
): LockBackend {
  return new ReentrantLockBackend(ctx, name, kind, style, fence);
}

/**
 * The lock of one name, as one handle sees it; every acquisition through it shares it. A class,
 * with what only waits need made on first use: `getLock(name)` per call is a common way to use it.
 */
class ReentrantLockBackend implements LockBackend {
  readonly key: string;
  /**
   * The scripts find the queue, the waiters, the hand-over channel and the release markers by the
   * lock hash's name (keys.ts names them the same way): every call carries one key.
   */
  readonly lockKey: readonly string[];
  /** What acquire.lua is sent: the lock hash, and a FencedLock's token counter. */
  readonly grantKeys: readonly string[];
  readonly renewScript = lockRenew;
  readonly checkScript = lockCheck;
  #identity: string | undefined;
  #handOverChannel: string | undefined;

  constructor(
    readonly ctx: ClientContext,
    readonly name: string,
    readonly kind: LockKind,
    readonly style: LockWaitStyle,
    fence: string | undefined,
  ) {
    this.key = lockHashKey(ctx.options.keyPrefix, name);
    this.lockKey = [this.key];
    this.grantKeys = fence === undefined ? this.lockKey : [this.key, fence];
  }

  get identity(): string {
    return (this.#identity ??= `${this.ctx.clientId}|${this.key}`);
  }

  /** Hand-overs to this client's waiters arrive here. */
  get handOverChannel(): string {
    const { keyPrefix } = this.ctx.options;
    return (this.#handOverChannel ??= `${lockKeys(keyPrefix, this.name).handOverPrefix}:${this.ctx.clientId}`);
  }

  /** A queued waiter refreshes its place this often. */
  get refreshEvery(): number {
    return Math.max(1, Math.floor(this.ctx.options.fairWaiterTimeout / 3));
  }

  begin(owner: string, leaseMs: number): Acquisition<Grant> {
    return new LockAcquisition(this, owner, leaseMs);
  }

  async reenter(owner: string, holds: number, leaseMs: number, until: number): Promise<Grant | null> {
    const sentAt = now();
    const reply = await runUntilKnown(this.ctx.run, lockReenter, this.lockKey, [owner, holds, leaseMs], until);
    return reply === null ? null : { since: sentAt, validUntil: provenUntil(sentAt, leaseMs) };
  }

  release(
    owner: string,
    holdId: string,
    holds: number,
    until: number,
    lease?: { readonly at: number; readonly left: number; readonly max: number },
  ): Promise<number> {
    const args = [owner, holds, markerTtl(until, lease), holdId];
    return runUntilKnown(this.ctx.run, lockRelease, this.lockKey, args, until).then(Number);
  }

  async forceUnlock(): Promise<boolean> {
    const { commandTimeout } = this.ctx.options;
    const args = [newOwnerId(), 2 * commandTimeout];
    const until = now() + commandTimeout;
    return Number(await runUntilKnown(this.ctx.run, lockForceUnlock, this.lockKey, args, until)) === 1;
  }

  async status(owner: string): Promise<LockStatus> {
    return toStatus(await this.ctx.run(lockStatus, this.lockKey, [owner]));
  }
}

/** One acquisition of the lock by one owner: its attempts, and the tickets of those that queued. */
class LockAcquisition implements Acquisition<Grant> {
  #tickets = 0;
  #waitId: string | undefined;
  /** When each queued attempt was sent, by ticket (the last few). */
  #sent: Map<string, number> | undefined;
  /** A dead waiter's place lapses after fairWaiterTimeout: a lock handed to it is kept no longer. */
  readonly #reserve: number;

  constructor(
    private readonly setup: ReentrantLockBackend,
    private readonly owner: string,
    private readonly leaseMs: number,
  ) {
    this.#reserve = Math.min(leaseMs, setup.ctx.options.fairWaiterTimeout);
  }

  get name(): string {
    return this.setup.name;
  }

  get kind(): LockKind {
    return this.setup.kind;
  }

  get grantKey(): string {
    return this.setup.lockKey[0]!;
  }

  get channel(): string | undefined {
    return this.setup.style.queue ? this.setup.handOverChannel : undefined;
  }

  get pause(): ((retry: number) => number) | undefined {
    return this.setup.style.queue ? undefined : this.setup.style.pause;
  }

  /** Names this wait in hand-over messages: unique in this process, not secret. */
  get waitId(): string {
    return (this.#waitId ??= (++waitCount).toString(36));
  }

  attempt(deadline: number | undefined, listening: boolean, message: string | undefined): Promise<Attempt<Grant>> {
    const { ctx, grantKeys, style, refreshEvery } = this.setup;
    const handedAt = message === undefined ? undefined : this.#sent?.get(message);
    // The hand-over was written by the releasing client's connection: a WAIT on ours covers it only
    // after a write of ours, so replicaAcks takes hand-overs by a round trip.
    const trusted = handedAt !== undefined && ctx.options.replicaAcks === 0;
    // Taken on the message alone only while at least half the reservation is proven: a grant left
    // with a few ms would be lost by the first stall before the watchdog renews it. An older
    // attempt (its place is refreshed every fairWaiterTimeout / 3) is confirmed by a round trip.
    if (trusted && provenUntil(handedAt, this.#reserve) > now() + this.#reserve / 2) {
      const handed = this.#granted(handedAt, this.#reserve, true);
      // A FencedLock's token is drawn while it holds: one round trip, which proves the hold too.
      return grantKeys.length === 1 || !handed.acquired ? Promise.resolve(handed) : this.#withToken(handed, deadline);
    }
    // A wait queues once it listens for hand-overs: none goes out to a wait that would not hear it.
    const queue = style.queue && listening;
    const sentAt = now();
    let args: (string | number)[] = [this.owner, this.leaseMs];
    if (queue) {
      const ticket = String(++this.#tickets);
      const sent = (this.#sent ??= new Map<string, number>());
      sent.set(ticket, sentAt);
      if (sent.size > 8) sent.delete(sent.keys().next().value!);
      const { fairWaiterTimeout } = ctx.options;
      args = [this.owner, this.leaseMs, fairWaiterTimeout, this.#reserve, this.waitId, ticket];
    }
    return ctx.run(lockAcquire, grantKeys, args, deadline).then((reply): Attempt<Grant> => {
      // Granted: nil, or a FencedLock's token (a string); otherwise the ms to wait (a number).
      if (reply === null || typeof reply === 'string') {
        return this.#granted(sentAt, this.leaseMs, false, reply === null ? undefined : BigInt(reply));
      }
      // A queued waiter comes back before its place lapses, even while the holder's lease runs long.
      return { acquired: false, retryIn: queue ? Math.min(Number(reply), refreshEvery) : Number(reply) };
    });
  }

  /** The token of a FencedLock handed over by message; not acquired if the hold ended meanwhile. */
  async #withToken(handed: Attempt<Grant> & { acquired: true }, deadline: number | undefined): Promise<Attempt<Grant>> {
    const { ctx, grantKeys } = this.setup;
    const token = await ctx.run(fencedLockIssue, grantKeys, [this.owner], deadline);
    // Lost in between (its reservation ran out): try again.
    if (token === null) return { acquired: false, retryIn: 1 };
    return { acquired: true, value: { ...handed.value, token: BigInt(token as string) } };
  }

  async giveUp(): Promise<void> {
    await this.setup.ctx.run(lockLeave, this.setup.lockKey, [this.owner], now() + LEAVE_TIMEOUT_MS);
  }

  /** A reply that came after the lease it set ran out grants nothing: try again. */
  #granted(since: number, leased: number, byMessage = false, token?: bigint): Attempt<Grant> {
    const validUntil = provenUntil(since, leased);
    if (validUntil <= now()) return { acquired: false, retryIn: 0 };
    return { acquired: true, value: { since, validUntil, byMessage, token } };
  }
}

/**
 * How long a last release's marker must be kept (see lock/release): until every repeat of the call
 * has run, which is before `until` (a call is cut then, but for the last moment MIN_CALL_MS gives
 * it), measured on the server's clock (the allowance of provenUntil). "" when the lease the lock has
 * left covers that without keeping the marker much longer: the marker then costs no expiry of its own.
 */
function markerTtl(
  until: number,
  lease: { readonly at: number; readonly left: number; readonly max: number } | undefined,
): number | '' {
  const needed = Math.ceil((Math.max(0, until - (lease?.at ?? now())) + MIN_CALL_MS) * 1.01) + 2;
  return lease && lease.left >= needed && lease.max <= 4 * needed ? '' : needed;
}

/** Reads the `{ exists, holds, ttl }` reply of a status script. */
export function toStatus(reply: unknown): LockStatus {
  const [exists, holds, ttl] = (reply as number[]).map(Number);
  return { locked: exists === 1, holds: holds ?? 0, ttl: ttl ?? -2 };
}

/** Creates the plain re-entrant lock returned by `LockClient.getLock()`. */
export function createLock(ctx: ClientContext, name: string): LockHandle {
  return new LockHandle(new KeyLock(ctx, lockBackend(ctx, name, 'lock', { queue: true })));
}
