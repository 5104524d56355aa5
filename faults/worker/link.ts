/**
 * The worker's side of the IPC channel to the runner.
 */
import type { FromWorker, RegisterCall, RegisterReply, WorkerEvent, WorkerStats } from '../protocol.js';

/**
 * The worker's side of the IPC channel. Register calls wait for the runner's answer, so that a
 * section's exit is recorded before its lock is released and its successor's entry after it was
 * acquired: the register sees sections in causal order whatever the processes' scheduling.
 */
export class RunnerLink {
  #next = 0;
  readonly #pending = new Map<number, (reply: RegisterReply) => void>();

  call(call: RegisterCall): Promise<RegisterReply> {
    const id = this.#next++;
    return new Promise((resolve) => {
      this.#pending.set(id, resolve);
      this.send({ type: 'call', id, call });
    });
  }

  event(event: WorkerEvent): void {
    this.send({ type: 'event', event });
  }

  stats(stats: WorkerStats): void {
    this.send({ type: 'stats', stats });
  }

  answered(id: number, reply: RegisterReply): void {
    const resolve = this.#pending.get(id);
    this.#pending.delete(id);
    resolve?.(reply);
  }

  send(message: FromWorker): void {
    // The runner gone (it crashed or was killed): nothing left to report to.
    if (!process.connected) process.exit(1);
    process.send?.(message);
  }
}

/** What a caught value says about itself, for the history. */
export function errorInfo(error: unknown): { name: string; code?: string; message: string } {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    return { name: error.name, ...(typeof code === 'string' ? { code } : {}), message: error.message };
  }
  return { name: typeof error, message: String(error) };
}
