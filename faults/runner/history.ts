/**
 * A scenario's history: kept in memory for the checker and written as JSON lines.
 */
import { createWriteStream, type WriteStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import type { HistoryRecord } from '../protocol.js';

/**
 * A scenario's history: every record kept in memory for the checker and written as one JSON line
 * to `path`, so a failure can be inspected or checked again (`npm run faults -- --check <file>`).
 */
export class History {
  readonly records: HistoryRecord[] = [];
  readonly #out: WriteStream;

  constructor(readonly path: string) {
    this.#out = createWriteStream(path);
  }

  add(record: HistoryRecord): void {
    this.records.push(record);
    this.#out.write(`${JSON.stringify(record)}\n`);
  }

  close(): Promise<void> {
    return new Promise((resolve, reject) =>
      this.#out.end((error?: Error | null) => (error ? reject(error) : resolve())),
    );
  }
}

/** Reads a history file back. */
export async function readHistory(path: string): Promise<HistoryRecord[]> {
  const text = await readFile(path, 'utf8');
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as HistoryRecord);
}
