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

/** What one tick has written to one socket. */
interface Tick {
  readonly stream: CorkableStream;
  /** Writes corked since the last flush; 0: not corked. */
  corked: number;
}

export class WriteCoalescer {
  #tick: Tick | undefined;
  /** The tick just started by the write in progress: its end is scheduled after that write. */
  #started: Tick | undefined;

  /** Called just before a command is written to `stream` (undefined: a socket not to cork). */
  beforeWrite(stream: CorkableStream | undefined): void {
    if (!stream?.writable) return;
    const tick = this.#tick;
    if (tick?.stream !== stream) {
      this.#tick = this.#started = { stream, corked: 0 };
      return;
    }
    if (tick.corked === 0) {
      stream.cork();
    } else if (tick.corked === MAX_CORKED) {
      stream.uncork();
      stream.cork();
      tick.corked = 0;
    }
    tick.corked++;
  }

  /**
   * Called just after the write: the first write of a tick schedules the tick's end now, so that
   * this work does not stand between the caller and its socket write.
   */
  afterWrite(): void {
    const started = this.#started;
    if (!started) return;
    this.#started = undefined;
    process.nextTick(() => {
      if (this.#tick === started) this.#tick = undefined;
      if (started.corked > 0) started.stream.uncork();
    });
  }
}
