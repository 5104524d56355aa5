/** The part of a Node stream used to coalesce writes. */
export interface CorkableStream {
  readonly writable: boolean;
  cork(): void;
  uncork(): void;
}

/**
 * Most writes go out at once, one syscall each (ioredis writes every command to its socket as it
 * is sent). Many tasks of one process tend to send their scripts in the same tick, though: one
 * socket read resolves all their replies, and each goes on to its next call. Corking the socket
 * until the end of the tick sends those in one write. A lone call waits for no I/O turn: the
 * uncork runs before the event loop goes back to polling. Past MAX_CORKED writes the batch goes
 * out at once, so that Redis works on it while the next one is being written.
 */
const MAX_CORKED = 16;

export class WriteCoalescer {
  #corked: CorkableStream | undefined;
  #count = 0;

  /** Called just before a command is written to `stream`. */
  beforeWrite(stream: CorkableStream | undefined): void {
    if (this.#corked !== undefined && this.#corked === stream) {
      if (++this.#count <= MAX_CORKED) return;
      stream.uncork();
      stream.cork();
      this.#count = 1;
      return;
    }
    if (!stream?.writable) return;
    stream.cork();
    this.#corked = stream;
    this.#count = 1;
    process.nextTick(() => {
      if (this.#corked === stream) this.#corked = undefined;
      stream.uncork();
    });
  }
}
