/**
 * Tests of the fault suite's checker, on histories made by hand.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import fc from 'fast-check';
import { analyze } from '../check/analyze.js';
import type { HistoryRecord, Primitive, ResourceSpec } from '../protocol.js';
import { History } from '../runner/history.js';
import { Register } from '../runner/register.js';
import { STRICT } from '../scenarios/types.js';

/**
 * The fault suite's checker, judged on histories made by hand: it must flag what breaks a
 * guarantee and nothing else. (The control scenario shows the same on a real run.)
 */
const resource = (primitive: Primitive, permits?: number): ResourceSpec => ({
  name: 'r',
  primitive,
  ...(permits === undefined ? {} : { permits }),
  tasks: 1,
  shared: 0,
  styles: ['withLock'],
  holdMs: [1, 1],
  thinkMs: [0, 0],
});

function scenario(res: ResourceSpec, expect = STRICT): HistoryRecord {
  const spec = { name: 's', title: 't', control: false, client: { watchdogTimeout: 1_000 }, resources: [res], expect };
  return { t: 0, ev: 'scenario', name: 's', seed: 0, spec };
}

/** One section as the register records it: enter at `from`, exit at `to`, writing what it read + 1. */
function section(cs: string, w: number, from: number, to: number, read: number, wrote = read + 1): HistoryRecord[] {
  const base = { res: 'r', cs, w };
  return [
    { t: from, ev: 'enter', ...base, task: cs, mode: 'write', accepted: true, value: read },
    { t: to, ev: 'exit', ...base, write: wrote, accepted: true, value: wrote },
  ];
}

/** Sections laid one after another, each starting after the previous one ended. */
const sequential = fc.array(fc.tuple(fc.integer({ min: 1, max: 50 }), fc.integer({ min: 0, max: 20 })), {
  minLength: 2,
  maxLength: 30,
});

/**
 * Sections one after another, as an exclusive lock lets them run; with `overlapAt` = k, section k
 * enters just after k-1 did (before k-1 wrote), reads what k-1 read, and both write the same value.
 */
function lay(steps: readonly (readonly [number, number])[], overlapAt?: number): HistoryRecord[] {
  const records: HistoryRecord[] = [scenario(resource('lock'))];
  let t = 10;
  let value = 0;
  let previous = { from: 0, read: 0 };
  steps.forEach(([hold, gap], i) => {
    const overlapping = i === overlapAt;
    const from = overlapping ? previous.from + 0.001 : t;
    const read = overlapping ? previous.read : value;
    records.push(...section(`c${i}`, i % 3, from, from + hold, read));
    value = read + 1;
    previous = { from, read };
    t = Math.max(t, from + hold) + gap + 0.01;
  });
  return records.sort((a, b) => a.t - b.t);
}

test('sections one after another: no overlap, no lost update, the scenario passes', () => {
  fc.assert(
    fc.property(sequential, (steps) => {
      const verdict = analyze(lay(steps));
      assert.deepEqual(verdict.reasons, []);
      assert.equal(verdict.figures[0]?.believed, 0);
    }),
  );
});

test('one section entering before its predecessor left: an overlap and a lost update are flagged', () => {
  fc.assert(
    fc.property(sequential, fc.nat(), (steps, pick) => {
      const verdict = analyze(lay(steps, 1 + (pick % (steps.length - 1))));
      const figures = verdict.figures[0]!;
      assert.ok(figures.believed >= 1, 'the overlap is seen');
      assert.ok(figures.accepted >= 1, 'both wrote');
      assert.equal(figures.lostUpdates, 1);
      assert.equal(verdict.pass, false);
    }),
  );
});

test('a semaphore: the most holders at once and the entries beyond the permits, as counted by brute force', () => {
  const intervals = fc.array(fc.tuple(fc.integer({ min: 0, max: 100 }), fc.integer({ min: 1, max: 30 })), {
    minLength: 1,
    maxLength: 25,
  });
  fc.assert(
    fc.property(intervals, fc.integer({ min: 1, max: 3 }), (spans, permits) => {
      const records: HistoryRecord[] = [scenario(resource('semaphore', permits))];
      // Distinct times: entries at even hundredths, exits at odd ones.
      const sections = spans.map(([from, len], i) => ({
        from: from + i * 0.0002,
        to: from + len + i * 0.0002 + 0.0001,
      }));
      sections.forEach((s, i) => {
        const base = { res: 'r', cs: `p${i}`, w: 0 };
        records.push({ t: s.from, ev: 'enter', ...base, task: `p${i}`, mode: 'permit', accepted: true, value: 0 });
        records.push({ t: s.to, ev: 'exit', ...base, accepted: true, value: 0 });
      });
      const holdersAt = (t: number): number => sections.filter((s) => s.from <= t && s.to > t).length;
      const most = Math.max(...sections.map((s) => holdersAt(s.from)));
      const beyond = sections.filter((s) => holdersAt(s.from) > permits).length;
      const figures = analyze(records.sort((a, b) => a.t - b.t)).figures[0]!;
      assert.equal(figures.maxConcurrent, most);
      assert.equal(figures.overPermits, beyond);
    }),
  );
});

test('a loss signal with no fault is a false alarm; one inside a lock-losing fault is not', () => {
  const lost: HistoryRecord = { t: 15, ev: 'event', w: 0, kind: 'lost', res: 'r', task: 'c0', cs: 'c0', reason: 'x' };
  const records = [
    scenario(resource('lock'), { ...STRICT, lossSignals: 'exposed' }),
    ...section('c0', 0, 10, 20, 0),
    lost,
  ];
  assert.equal(analyze(records).figures[0]?.spurious.length, 1);
  const fault: HistoryRecord = {
    t: 12,
    ev: 'fault',
    kind: 'key-deleted',
    phase: 'instant',
    losesLocks: true,
    scope: { cs: 'c0' },
  };
  assert.equal(analyze([...records, fault].sort((a, b) => a.t - b.t)).figures[0]?.spurious.length, 0);
});

test('a hold a fault took, with neither a signal nor a rejected release, is reported as never learned', () => {
  const fault: HistoryRecord = {
    ...{ t: 12, ev: 'fault', kind: 'key-deleted', phase: 'instant' },
    ...{ losesLocks: true, takesHolds: true, detect: true, scope: { cs: 'c0' } },
  };
  const released: HistoryRecord = { t: 21, ev: 'event', w: 0, kind: 'released', res: 'r', task: 'c0', cs: 'c0' };
  const records = [scenario(resource('lock')), ...section('c0', 0, 10, 20, 0), released];
  const verdict = analyze([...records, fault].sort((a, b) => a.t - b.t));
  assert.deepEqual(verdict.figures[0]?.detection.silent, ['c0']);
  assert.equal(verdict.pass, false);
});

test('the register refuses a token smaller than the largest it has seen, reads included', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'latchkey-register-'));
  const history = new History(join(dir, 'h.jsonl'));
  try {
    const register = new Register(history);
    const enter = (cs: string, token: string) =>
      register.call(0, { op: 'enter', res: 'r', task: cs, cs, mode: 'write', token });
    assert.equal(enter('a', '5').accepted, true);
    assert.equal(enter('b', '6').accepted, true);
    assert.equal(register.call(0, { op: 'exit', res: 'r', cs: 'a', write: 1 }).accepted, false, 'stale write');
    assert.equal(enter('c', '4').accepted, false, 'stale read');
    assert.deepEqual(register.call(0, { op: 'exit', res: 'r', cs: 'b', write: 1 }), { accepted: true, value: 1 });
  } finally {
    await history.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
