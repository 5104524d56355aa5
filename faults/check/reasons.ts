/**
 * Why a resource's figures fail its scenario's expectations.
 */
import type { Expectations } from '../scenarios/types.js';
import type { Figures } from './figures.js';
import { percentile, type Overlap } from './overlaps.js';

/** Why one resource's figures fail its expectations; empty when they pass. */
export function reasons(f: Figures, expect: Expectations, faulted: boolean): string[] {
  const why: string[] = [];
  // Pairs across processes say more than pairs on one client: show one of those if there is one.
  const described = (pairs: readonly Overlap[]): string => {
    const same = pairs.filter((p) => p.sameProcess).length;
    const o = pairs.find((p) => !p.sameProcess) ?? pairs[0];
    const split = same === 0 ? '' : ` (${same} between tasks of one process)`;
    return o ? `${split}, e.g. ${o.a} and ${o.b} for ${o.ms.toFixed(1)} ms` : '';
  };
  if (f.permits !== undefined && f.overPermits > 0 && expect.believedToleranceMs !== undefined)
    why.push(`${f.overPermits} entries beyond ${f.permits} permits (up to ${f.maxConcurrent} holders)`);
  if (f.permits === undefined && f.believedOverTolerance > 0)
    why.push(
      `${f.believedOverTolerance} believed overlaps over ${expect.believedToleranceMs} ms${described(f.overTolerance)}`,
    );
  if (expect.acceptedOverlaps === 'zero' && f.accepted > 0)
    why.push(`${f.accepted} accepted overlaps${described(f.acceptedPairs)}`);
  if (expect.lostUpdates === 'zero' && (f.lostUpdates ?? 0) > 0) why.push(`${f.lostUpdates} lost updates`);
  if (f.errors.length > 0) why.push(`${f.errors.length} errors, e.g. ${f.errors[0]}`);
  if (f.spurious.length > 0) why.push(`${f.spurious.length} false loss signals, e.g. ${f.spurious[0]}`);
  if (f.wrong.length > 0) why.push(`${f.wrong.length} wrong results, e.g. ${f.wrong[0]}`);
  if (f.detection.silent.length > 0)
    why.push(`${f.detection.silent.length} lost holds never reported, e.g. ${f.detection.silent[0]}`);
  if (f.detection.late.length > 0)
    why.push(
      `${f.detection.late.length} lost holds not signalled within ${expect.detectWithinMs} ms, e.g. ${f.detection.late[0]}`,
    );
  if (expect.everyTaskEnters && f.starved.length > 0)
    why.push(`${f.starved.length} tasks never got in, e.g. ${f.starved[0]}`);
  if (expect.recovers && faulted && f.afterFaults === 0) why.push('no section entered after the last fault');
  if (f.sections === 0) why.push('no section entered at all');
  const p99 = percentile(f.detection.latencies, 99);
  if (expect.detectWithinMs !== undefined && p99 !== undefined && p99 > expect.detectWithinMs)
    why.push(`detection p99 ${p99.toFixed(0)} ms over ${expect.detectWithinMs} ms`);
  return why;
}
