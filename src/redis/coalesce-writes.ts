/**
 * Coalescing the script calls a process sends in one tick into one socket write (ioredis).
 */
/** The part of a Node stream used to coalesce writes. */
export interface CorkableStream {
  readonly writable: boolean;
  cork(): void;
  uncork(): void;
}

/**
 * ioredis writes every command to its socket as it is sent, one syscall each. Many tasks of one
 * process tend to send their scripts in the same tick, though: one socket read resolves all their
 * replies, and each goes on to its next call. The first write of a tick goes out at once (a lone
 * call, or one of several sent to several servers, waits for nothing); the ones after it in the
 * same tick are corked and leave together when the tick ends, before the event loop goes back to
 * polling. Past MAX_CORKED writes a batch leaves at once, so that Redis works on it while the next
 * one is written.
 */
const MAX_CORKED = 16;

export class WriteCoalescer {
  // One tick's state in fields, not an object per tick: a lock()/unlock() loop starts a tick on
  // every round trip.
  /** The socket written to in this tick; undefined between ticks. */
  #stream: CorkableStream | undefined;
  /** Writes corked since the last flush; 0: not corked. */
  #corked = 0;
  /** The write in progress started the tick: its end is scheduled after that write. */
  #starting = false;

  /** Called just before a command is written to `stream` (undefined: a socket not to cork). */
  beforeWrite(stream: CorkableStream | undefined): void {
    if (!stream?.writable) return;
    if (this.#stream !== stream) {
      // A new socket mid-tick (reconnected): what the old one holds corked leaves now.
      this.#flush();
      this.#stream = stream;
      this.#starting = true;
      return;
    }
    if (this.#corked === 0) {
      stream.cork();
    } else if (this.#corked === MAX_CORKED) {
      stream.uncork();
      stream.cork();
      this.#corked = 0;
    }
    this.#corked++;
  }

  /**
   * Called just after the write: the first write of a tick schedules the tick's end now, so that
   * this work does not stand between the caller and its socket write.
   */
  afterWrite(): void {
    if (!this.#starting) return;
    this.#starting = false;
    process.nextTick(this.#endTick);
  }

  /** Made once, not a closure per tick. */
  readonly #endTick = (): void => {
    this.#flush();
    this.#stream = undefined;
  };

  #flush(): void {
    if (this.#corked > 0) this.#stream?.uncork();
    this.#corked = 0;
  }
}
