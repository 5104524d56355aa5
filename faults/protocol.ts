/**
 * What the runner and its worker processes say to each other over IPC, and the records of a run's
 * history (one JSON object per line). Kept in one place: the worker, the register, the checker
 * and a replay all read the same shapes.
 */

/** The primitive a resource is guarded by; `none` is the control (no lock at all). */
export type Primitive =
  'lock' | 'fair-lock' | 'spin-lock' | 'fenced-lock' | 'semaphore' | 'read-write-lock' | 'red-lock' | 'none';

/** How a task takes and gives back its primitive: the API styles users write. */
export type Style =
  /** `lock.withLock(fn)`: the critical section runs in the callback, with its signal. */
  | 'withLock'
  /** `lease = await lock.acquire()`, then `lease.release()` (a fenced lease carries its token). */
  | 'acquire'
  /** `lock()` / `unlock()`: no signal, the caller trusts that `lock()` resolved while held. */
  | 'lock'
  /** Fenced: `lockAndGetToken()` / `unlock()`. */
  | 'token'
  /** `client.scope()`: `lock(); lock(); unlock(); unlock()` with the hold counts checked. */
  | 'scope'
  /** `withLock(() => withLock(...))` on one handle, with the hold counts checked. */
  | 'nested'
  /** Semaphore `acquire()` / `release()`. */
  | 'permit'
  /** Semaphore `tryAcquire({ waitTime })` / `release()`. */
  | 'try-permit'
  /** The control: the critical section with no lock. */
  | 'bare';

/** One protected resource of a scenario: a named primitive and the tasks every worker runs on it. */
export interface ResourceSpec {
  readonly name: string;
  readonly primitive: Primitive;
  /** Permits of a semaphore. */
  readonly permits?: number;
  /** Tasks per worker process. */
  readonly tasks: number;
  /** How many of them share one handle of the process (the rest get a handle each). */
  readonly shared: number;
  /** Styles, cycled over the tasks. */
  readonly styles: readonly Style[];
  /** Read-write lock: tasks per worker that read (the others write). */
  readonly readers?: number;
  /** Time inside the critical section and between two of them, drawn uniformly (ms). */
  readonly holdMs: readonly [number, number];
  readonly thinkMs: readonly [number, number];
  /** Semaphore `try-permit`: how long one `tryAcquire` may wait. */
  readonly waitTimeMs?: number;
  /**
   * Each wait is also aborted after a time drawn from this range (ms), as a caller that gives up
   * would: often while an attempt is in flight. Use styles that wait once per section.
   */
  readonly abortWaitMs?: readonly [number, number];
  /**
   * The share of waits `abortWaitMs` aborts (default 1: all). A task whose every wait gives up
   * within ms gets in only when the lock comes round within them, and on a loaded machine some
   * never do; with waits that stay, every task must still get in.
   */
  readonly abortShare?: number;
}

/** The LockClient options a scenario sets. */
export interface ClientOptions {
  readonly watchdogTimeout?: number;
  readonly fairWaiterTimeout?: number;
  readonly commandTimeout?: number;
}

export interface WorkerConfig {
  readonly worker: number;
  readonly seed: number;
  /** One entry per Redis server: the URL the worker's clients use (maybe through a proxy), and a direct one. */
  readonly servers: readonly { readonly url: string; readonly direct: string }[];
  readonly client: ClientOptions;
  readonly resources: readonly ResourceSpec[];
  /** A soak: the worker reports its WorkerStats this often while its tasks run. */
  readonly statsEveryMs?: number;
}

/** What a worker process holds on to, sampled by a soak: what must not grow over hours. */
export interface WorkerStats {
  /** V8 heap in use after a full collection, bytes. */
  readonly heapUsed: number;
  /** Active handles and requests (sockets, timers...): `process.getActiveResourcesInfo()`. */
  readonly handles: number;
  /** Listeners on the worker's clients (its ioredis connections and LockClients). */
  readonly listeners: number;
  /**
   * What latchkey keeps per client, summed: holds, Livenesses, renewals and channels with waiters.
   * Bounded by the tasks running at once: it must not grow with time.
   */
  readonly records: number;
}

/** What a critical section does to the register: a writer reads then writes, a reader reads twice. */
export type Mode = 'write' | 'read' | 'permit';

/** A call to the register; the worker waits for its reply, so the register sees sections in causal order. */
export type RegisterCall =
  | {
      readonly op: 'enter';
      readonly res: string;
      readonly task: string;
      readonly cs: string;
      readonly mode: Mode;
      /** Fencing token (decimal), for fenced locks. */
      readonly token?: string;
    }
  | {
      readonly op: 'exit';
      readonly res: string;
      readonly cs: string;
      /** The value a writer writes (what it read + 1); left out by readers and abandoned sections. */
      readonly write?: number;
      /** Why the section stopped early (its lease signal aborted, its token was refused). */
      readonly abandon?: string;
    };

export interface RegisterReply {
  /** False when the register refused the call's token (smaller than the largest it has seen). */
  readonly accepted: boolean;
  /** The counter's value after the call. */
  readonly value: number;
}

export interface ErrorInfo {
  readonly name: string;
  readonly code?: string;
  readonly message: string;
}

/** Things a worker reports without waiting for an answer. */
export type WorkerEvent =
  /** A task starts asking for its primitive. */
  | { readonly kind: 'want'; readonly res: string; readonly task: string }
  /** The ask ended: acquired, gave up (waitTime), aborted by the task, stopped by the runner, or failed. */
  | {
      readonly kind: 'wait-end';
      readonly res: string;
      readonly task: string;
      readonly outcome: 'acquired' | 'timeout' | 'aborted' | 'stopped' | 'error';
    }
  /** The lease signal of the section `cs` (or of a hold between sections) aborted. */
  | {
      readonly kind: 'lost';
      readonly res: string;
      readonly task: string;
      readonly cs?: string;
      readonly reason: string;
    }
  /** `lock()`/`acquire()` resolved with a signal that had already aborted. */
  | { readonly kind: 'stale-grant'; readonly res: string; readonly task: string; readonly cs: string }
  /** The release after section `cs`: `ok`, or the error it rejected with. */
  | {
      readonly kind: 'released';
      readonly res: string;
      readonly task: string;
      readonly cs?: string;
      readonly error?: ErrorInfo;
    }
  /** An operation rejected (other than a release). */
  | {
      readonly kind: 'error';
      readonly res: string;
      readonly task: string;
      readonly cs?: string;
      readonly op: string;
      readonly error: ErrorInfo;
    }
  /** A result that differs from what the operations imply (a hold count, a permit count). */
  | {
      readonly kind: 'wrong';
      readonly res: string;
      readonly task: string;
      readonly cs?: string;
      readonly what: string;
      readonly expected: string;
      readonly actual: string;
    }
  /** latchkey published `lost` for `owner` while Redis still lists that owner on `key`. */
  | {
      readonly kind: 'still-held';
      readonly key: string;
      readonly owner: string;
      readonly reason: string;
      /** The key's PTTL when checked (-1: none). */
      readonly ttl: number;
    };

export type ToWorker =
  | { readonly type: 'config'; readonly config: WorkerConfig }
  | { readonly type: 'start' }
  | { readonly type: 'stop' }
  | { readonly type: 'shutdown' }
  | { readonly type: 'reply'; readonly id: number; readonly reply: RegisterReply };

export type FromWorker =
  | { readonly type: 'ready' }
  | { readonly type: 'call'; readonly id: number; readonly call: RegisterCall }
  | { readonly type: 'event'; readonly event: WorkerEvent }
  | { readonly type: 'stats'; readonly stats: WorkerStats }
  /** Every task has stopped and given back what it held. */
  | { readonly type: 'drained' }
  /** Clients shut down; the process exits next. */
  | { readonly type: 'closed' };

/** How a fault may legitimately affect the holds it touches. */
export interface FaultScope {
  /** Every section, one worker's sections, or one section. */
  readonly worker?: number;
  readonly cs?: string;
  readonly server?: number;
}

/** One line of a run's history. `t` is the runner's clock (ms, performance.timeOrigin + now()). */
export type HistoryRecord =
  | {
      readonly t: number;
      readonly ev: 'scenario';
      readonly name: string;
      readonly seed: number;
      readonly spec: unknown;
    }
  | ({ readonly t: number; readonly ev: 'enter'; readonly w: number } & RegisterReply & {
        readonly res: string;
        readonly task: string;
        readonly cs: string;
        readonly mode: Mode;
        readonly token?: string;
      })
  | ({ readonly t: number; readonly ev: 'exit'; readonly w: number } & RegisterReply & {
        readonly res: string;
        readonly cs: string;
        readonly write?: number;
        readonly abandon?: string;
      })
  | ({ readonly t: number; readonly ev: 'event'; readonly w: number } & WorkerEvent)
  | {
      readonly t: number;
      readonly ev: 'fault';
      readonly kind: string;
      readonly phase: 'start' | 'end' | 'instant';
      /** Whether holds in scope may be lost through it (their loss signals are then expected). */
      readonly losesLocks: boolean;
      readonly scope?: FaultScope;
      /**
       * It surely takes every hold in its scope that is in flight when it starts and still held
       * `lostAfterMs` later (when the lease ran out): their holders must learn.
       */
      readonly takesHolds?: boolean;
      readonly lostAfterMs?: number;
      /** Those holds are lost at its end (an instant: at once): detection latency counts from there. */
      readonly detect?: boolean;
      readonly detail?: string;
    }
  | {
      readonly t: number;
      readonly ev: 'end-state';
      readonly res: string;
      readonly ok: boolean;
      readonly what: string;
      readonly expected: string;
      readonly actual: string;
    }
  | {
      readonly t: number;
      readonly ev: 'stray-key';
      readonly server: number;
      readonly key: string;
      readonly type: string;
    }
  | { readonly t: number; readonly ev: 'note'; readonly text: string }
  /** A soak's samples: a worker's, and each live Redis server's (memory in bytes, key count). */
  | ({ readonly t: number; readonly ev: 'stats'; readonly w: number } & WorkerStats)
  | { readonly t: number; readonly ev: 'redis-stats'; readonly usedMemory: number; readonly keys: number };
