/**
 * Liveness: one per thing that can be lost (a hold, a reader, a group); the one place that decides
 * loss, aborts the signal and reports it; groups follow their members.
 */
import { listening, type LockKind } from '../diagnostics.js';
import { LockLostError } from '../errors.js';
import { DeadlineQueue, type Due } from './deadline-queue.js';

/** What a Liveness stands for, as reported when it is lost. */
export interface HoldIdentity {
  readonly name: string;
  readonly kind: LockKind;
  readonly key: string;
  readonly owner: string;
}

/**
 * One thing that can be lost: a held lock, a reader, a MultiLock member or the group itself. It
 * knows until when the hold is proven (`validUntil`, local clock, measured from before the server
 * granted or renewed it), aborts its `signal` once the hold is known lost, and decides that in
 * one place: here, when a renewal finds the hold gone, when the proven time runs out without a
 * renewal extending it, or when the members a group needs are lost. Whoever renews it (the
 * watchdog) only reports what Redis answered.
 */
export class Liveness implements Due {
  /** When the registry looks at it next (its proven end, or earlier): see Livenesses. */
  at: number;
  slot = -1;
  #validUntil: number;
  #controller: AbortController | undefined;
  #lost: LockLostError | undefined;
  #ended = false;
  /** Made on first use: most holds are watched by nobody (a MultiLock follows its members). */
  #watchers: Set<() => void> | undefined;

  constructor(
    readonly hold: HoldIdentity,
    validUntil: number,
    /** Why the hold is lost when its proven time runs out (a lease that ended, renewals that failed). */
    private readonly expiredWhy: string,
    private readonly registry: Livenesses,
    /** False for a MultiLock member: only the group's loss is the user's news. */
    private readonly announce = true,
  ) {
    this.#validUntil = validUntil;
    this.at = validUntil;
  }

  /** Aborts with the LockLostError once the hold is known lost. Made on first use. */
  get signal(): AbortSignal {
    if (!this.#controller) {
      this.#controller = new AbortController();
      if (this.#lost) this.#controller.abort(this.#lost);
    }
    return this.#controller.signal;
  }

  /** Until when the hold is proven (epoch ms, local clock). */
  get validUntil(): number {
    return this.#validUntil;
  }

  /** Why it was lost, once it was. */
  get lostError(): LockLostError | undefined {
    return this.#lost;
  }

  /** Still held as far as anyone knows: neither lost nor released. */
  get alive(): boolean {
    return this.#lost === undefined && !this.#ended;
  }

  /** A renewal proved the hold until `until`. */
  confirm(until: number): void {
    if (until <= this.#validUntil || !this.alive) return;
    this.#validUntil = until;
    this.#notify();
  }

  /** Sets the proven end outright, earlier too (a group that lost a member proves less). */
  reprove(until: number): void {
    if (!this.alive || until === this.#validUntil) return;
    this.#validUntil = until;
    this.registry.provenUntil(this);
  }

  /** The registry's clock: lost when its proven time has run out by `now`. */
  expireBy(now: number): void {
    if (this.alive && now >= this.#validUntil) this.lose(this.expiredWhy);
  }

  /** The hold is known gone: the signal aborts and the client reports `lockLost` (unless `quietly`). */
  lose(why: string, cause?: unknown, quietly = false): void {
    if (!this.alive) return;
    const { name, kind, key, owner } = this.hold;
    this.#lost = new LockLostError(`Lock "${name}" was lost: ${why}`, cause === undefined ? undefined : { cause });
    this.registry.forget(this);
    this.#controller?.abort(this.#lost);
    if (!quietly && this.announce) {
      listening('lost')?.publish({ name, kind, key, owner, reason: this.#lost.message });
      this.registry.reportLost(this.hold, this.#lost);
    }
    this.#notify();
  }

  /** Released: from now on it is never reported lost. */
  end(): void {
    if (!this.alive) return;
    this.#ended = true;
    this.registry.forget(this);
    this.#notify();
  }

  /** Calls `watcher` whenever this liveness is confirmed further, lost or ended. */
  watch(watcher: () => void): () => void {
    (this.#watchers ??= new Set()).add(watcher);
    return () => this.#watchers?.delete(watcher);
  }

  #notify(): void {
    if (this.#watchers) for (const watcher of this.#watchers) watcher();
  }
}

/**
 * Every Liveness of one client: it reports losses as the client's `lockLost` event, and at
 * shutdown aborts the signals of all holds left (they are no longer renewed). One queue by proven
 * end, with one timer, serves them all: a hold taken and released in a loop costs no timer of its
 * own. A renewal moves a proven end later without touching the queue; the hold is looked at when
 * its former end comes, and queued again for its new one.
 */
export class Livenesses {
  readonly #queue = new DeadlineQueue<Liveness>((time) => this.#ring(time));

  constructor(readonly reportLost: (hold: HoldIdentity, error: LockLostError) => void) {}

  create(hold: HoldIdentity, validUntil: number, expiredWhy: string, announce = true): Liveness {
    const liveness = new Liveness(hold, validUntil, expiredWhy, this, announce);
    this.#queue.add(liveness);
    return liveness;
  }

  forget(liveness: Liveness): void {
    this.#queue.remove(liveness);
  }

  /** `liveness` is proven until an earlier moment than it was queued for. */
  provenUntil(liveness: Liveness): void {
    if (liveness.validUntil < liveness.at) this.#queue.move(liveness, liveness.validUntil);
  }

  #ring(time: number): void {
    for (let due = this.#queue.takeDue(time); due; due = this.#queue.takeDue(time)) {
      due.expireBy(time);
      // Renewed since it was queued: looked at again when its new end comes.
      if (due.alive) {
        due.at = due.validUntil;
        this.#queue.add(due);
      }
    }
  }

  /** Client shutdown: every hold's signal aborts, without `lockLost` events. */
  abandonAll(why: string): void {
    this.#queue.stop();
    for (const liveness of [...this.#queue.items]) liveness.lose(why, undefined, true);
  }

  get size(): number {
    return this.#queue.size;
  }
}

/**
 * Makes `group` follow its members: proven until the `need`-th latest member proof (so that
 * `need` members are held until then), lost once fewer than `need` members are alive. Returns
 * what adds a member that joins later, and what stops following.
 */
export function followMembers(
  group: Liveness,
  members: readonly Liveness[],
  need: number,
): { add(member: Liveness): void; stop(): void } {
  const followed = new Set<Liveness>();
  const stops: (() => void)[] = [];
  const update = (): void => {
    if (!group.alive) return;
    const alive = [...followed].filter((member) => member.alive);
    if (alive.length < need) {
      const lost = [...followed].find((member) => member.lostError)?.lostError;
      group.lose(`fewer than ${need} of its members are held`, lost);
      return;
    }
    group.reprove(groupProvenUntil(alive, need)!);
  };
  const follow = (member: Liveness): void => {
    followed.add(member);
    stops.push(member.watch(update));
  };
  members.forEach(follow);
  update();
  const add = (member: Liveness): void => {
    follow(member);
    update();
  };
  return { add, stop: () => stops.forEach((stop) => stop()) };
}

/** Until when `need` of `members` are proven (the need-th latest proof); undefined when fewer are alive. */
export function groupProvenUntil(members: readonly Liveness[], need: number): number | undefined {
  const proofs = members.filter((member) => member.alive).map((member) => member.validUntil);
  return proofs.sort((a, b) => b - a)[need - 1];
}

/**
 * Until when a lease of `leaseMs` set by a call sent at `sentAt` (local clock) is proven: the server
 * set it after `sentAt`, so it ends after `sentAt + leaseMs` by the server's clock; Redlock's
 * allowance (1% plus 2 ms) covers the two clocks running at slightly different rates.
 */
export function provenUntil(sentAt: number, leaseMs: number): number {
  return sentAt + leaseMs - (Math.floor(leaseMs * 0.01) + 2);
}
