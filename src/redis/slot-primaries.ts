/**
 * A Cluster's slot map as latchkey reads it itself (CLUSTER SLOTS), for a client that keeps its own
 * to itself (GLIDE): which primary serves each slot, so that renewals are batched per node. Read at
 * once and again every few seconds while the adapter is open.
 */

/** Sends a command to any node of the Cluster. */
interface AnyNode {
  customCommand(args: string[], options?: never): Promise<unknown>;
}

/** How often the map is read again (a failover or a slot move shows up within this). */
const REFRESH_MS = 5_000;

export class SlotPrimaries {
  /** Per slot, its primary's `host:port`. */
  #bySlot: string[] = [];
  readonly #timer: NodeJS.Timeout | undefined;

  /** `cluster` undefined: not a Cluster, nothing to read. */
  constructor(private readonly cluster: AnyNode | undefined) {
    if (!cluster) return;
    void this.#read();
    this.#timer = setInterval(() => void this.#read(), REFRESH_MS);
    this.#timer.unref();
  }

  get(slot: number): string | undefined {
    return this.#bySlot[slot];
  }

  close(): void {
    clearInterval(this.#timer);
  }

  async #read(): Promise<void> {
    try {
      const reply = await this.cluster!.customCommand(['CLUSTER', 'SLOTS'], { route: 'randomNode' } as never);
      const bySlot: string[] = [];
      // Each range: [first slot, last slot, [host, port, id], ...replicas].
      for (const range of reply as [number, number, [string, number]][]) {
        const [first, last, [host, port]] = range;
        for (let slot = Number(first); slot <= Number(last); slot++) bySlot[slot] = `${host}:${port}`;
      }
      this.#bySlot = bySlot;
    } catch {
      // Kept as it was: the next read may succeed; meanwhile a slot not mapped is a group of its own.
    }
  }
}
