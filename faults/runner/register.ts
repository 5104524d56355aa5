/**
 * The protected resource the runner keeps: a fenced counter every critical section reads and writes.
 */
import type { RegisterCall, RegisterReply } from '../protocol.js';
import { now } from '../rng.js';
import type { History } from './history.js';

/** A section entered and not yet left. */
export interface OpenSection {
  readonly cs: string;
  readonly res: string;
  readonly task: string;
  readonly worker: number;
  readonly token: bigint | undefined;
  readonly enteredAt: number;
}

interface Cell {
  value: number;
  /** The largest token seen; every call with a smaller one is refused. */
  maxToken: bigint | undefined;
  readonly open: Map<string, OpenSection>;
}

/**
 * The protected resource, kept by the runner: per resource a counter that critical sections read
 * on entry and write (read + 1) on exit, fenced like a storage service that honours fencing
 * tokens (Kleppmann): any call carrying a token smaller than the largest seen is refused, reads
 * included, so a stale holder can neither write nor act on what it read. Every call is recorded,
 * stamped on this process's clock, in the order the calls arrived.
 */
export class Register {
  readonly #cells = new Map<string, Cell>();

  constructor(private readonly history: History) {}

  /** Sections in flight now (of one resource, or of all). */
  open(res?: string): OpenSection[] {
    const cells = res === undefined ? [...this.#cells.values()] : [this.#cells.get(res)].filter((c) => c !== undefined);
    return cells.flatMap((cell) => [...cell.open.values()]);
  }

  call(worker: number, call: RegisterCall): RegisterReply {
    const cell = this.#cell(call.res);
    const t = now();
    if (call.op === 'enter') {
      const token = call.token === undefined ? undefined : BigInt(call.token);
      const accepted = this.#admit(cell, token);
      cell.open.set(call.cs, { cs: call.cs, res: call.res, task: call.task, worker, token, enteredAt: t });
      const reply = { accepted, value: cell.value };
      this.history.add({ t, ev: 'enter', w: worker, ...call, ...reply });
      return reply;
    }
    const section = cell.open.get(call.cs);
    cell.open.delete(call.cs);
    let accepted = true;
    if (call.write !== undefined) {
      accepted = this.#admit(cell, section?.token);
      if (accepted) cell.value = call.write;
    }
    const reply = { accepted, value: cell.value };
    this.history.add({ t, ev: 'exit', w: worker, ...call, ...reply });
    return reply;
  }

  #admit(cell: Cell, token: bigint | undefined): boolean {
    if (token === undefined) return true;
    if (cell.maxToken !== undefined && token < cell.maxToken) return false;
    cell.maxToken = token;
    return true;
  }

  #cell(res: string): Cell {
    let cell = this.#cells.get(res);
    if (!cell) {
      cell = { value: 0, maxToken: undefined, open: new Map() };
      this.#cells.set(res, cell);
    }
    return cell;
  }
}
