/**
 * Shows the part of a stored history around one section (`--check FILE --around SECTION`).
 */
import type { HistoryRecord } from './protocol.js';

/** Fields a line shows in its own columns. */
const SHOWN = new Set(['t', 'ev', 'w', 'kind']);

/** One history record as a short line: time (ms from the start), worker, what, and the details. */
function line(r: HistoryRecord, t0: number): string {
  const at = `${(r.t - t0).toFixed(1).padStart(9)} ms`;
  switch (r.ev) {
    case 'enter':
      return `${at}  w${r.w}  enter   ${r.cs}${r.token ? ` token ${r.token}` : ''} read ${r.value}${r.accepted ? '' : ' REFUSED'}`;
    case 'exit': {
      const what = r.abandon ? `abandoned (${r.abandon})` : r.write === undefined ? 'left' : `wrote ${r.write}`;
      return `${at}  w${r.w}  exit    ${r.cs} ${what}${r.accepted ? '' : ' REFUSED'}`;
    }
    case 'event':
      return `${at}  w${r.w}  ${r.kind.padEnd(7)} ${JSON.stringify(r, (k, v: unknown) => (SHOWN.has(k) ? undefined : v))}`;
    case 'fault':
      return `${at}  --  FAULT ${r.kind} ${r.phase} ${JSON.stringify(r.scope ?? 'all')} ${r.detail ?? ''}`;
    default:
      return `${at}  --  ${r.ev} ${JSON.stringify({ ...r, t: undefined, ev: undefined })}`;
  }
}

/**
 * The part of a history around section `cs`: every record from `marginMs` before it entered to
 * `marginMs` after it left, so an overlap can be read in order.
 */
export function around(records: readonly HistoryRecord[], cs: string, marginMs = 100): string {
  const t0 = records[0]?.t ?? 0;
  const mine = records.filter((r) => (r.ev === 'enter' || r.ev === 'exit') && r.cs === cs);
  if (mine.length === 0) return `no section ${cs} in this history`;
  const from = Math.min(...mine.map((r) => r.t)) - marginMs;
  const to = Math.max(...mine.map((r) => r.t)) + marginMs;
  return records
    .filter((r) => r.t >= from && r.t <= to)
    .map((r) => line(r, t0))
    .join('\n');
}
