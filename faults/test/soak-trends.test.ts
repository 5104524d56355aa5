/**
 * The soak's growth check: a series that grows steadily is reported, one that only wobbles is flat,
 * the warm-up (the run's first tenth) does not count, and a series that follows the section rate
 * is told apart from one that grows with the sections entered so far.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { soakTrends } from '../check/soak.js';
import type { HistoryRecord } from '../protocol.js';

const MB = 1024 * 1024;

/** Samples of one worker and the servers every 10 s for 30 minutes. */
function history(
  heapMb: (minute: number) => number,
  keys: (minute: number) => number,
  live: (minute: number) => number = () => 12,
  sectionsPerMinute?: (minute: number) => number,
): HistoryRecord[] {
  const records: HistoryRecord[] = [];
  if (sectionsPerMinute) {
    // Entries spread evenly within each second at that second's rate.
    for (let second = 0; second < 30 * 60; second++) {
      const perSecond = Math.round(sectionsPerMinute(second / 60) / 60);
      for (let i = 0; i < perSecond; i++) {
        records.push({ t: second * 1000 + (i * 1000) / perSecond, ev: 'enter' } as unknown as HistoryRecord);
      }
    }
  }
  for (let t = 0; t <= 30 * 60_000; t += 10_000) {
    const minute = t / 60_000;
    records.push({
      t,
      ev: 'stats',
      w: 0,
      heapUsed: heapMb(minute) * MB,
      handles: 30 + (t % 3),
      listeners: 5,
      records: Math.round(live(minute)),
    });
    records.push({ t, ev: 'redis-stats', usedMemory: 14 * MB, keys: keys(minute) });
  }
  return records;
}

const flatness = (records: HistoryRecord[]): Record<string, boolean> =>
  Object.fromEntries(soakTrends(records).map((trend) => [trend.series, trend.flat]));

describe('soak trends', () => {
  it('a wobbling heap and steady counts are flat; a warm-up is not counted', () => {
    const records = history(
      (minute) => (minute < 2 ? 10 + minute * 10 : 25 + Math.sin(minute) * 3),
      () => 20_000,
    );
    assert.deepEqual(Object.values(flatness(records)), [true, true, true, true, true, true]);
  });

  it('a heap that grows 1 MB a minute, or keys that pile up, are reported', () => {
    const found = flatness(
      history(
        (minute) => 25 + minute,
        (minute) => 20_000 + minute * 500,
      ),
    );
    assert.equal(found['worker 0 heap after GC'], false);
    assert.equal(found['Redis keys'], false);
    assert.equal(found['worker 0 listeners'], true);
  });

  it("latchkey's records may swing with the tasks in flight; one left behind per section is reported", () => {
    const swinging = flatness(
      history(
        () => 25,
        () => 20_000,
        (minute) => (minute % 2 < 1 ? 0 : 60),
      ),
    );
    assert.equal(swinging['worker 0 latchkey records'], true);
    const leaking = flatness(
      history(
        () => 25,
        () => 20_000,
        (minute) => 12 + minute * 40,
      ),
    );
    assert.equal(leaking['worker 0 latchkey records'], false);
  });

  /** A machine whose speed swings by a third every 12 minutes and drifts up over the run. */
  const drifting = (minute: number): number => 1_000 + 350 * Math.sin((2 * Math.PI * minute) / 12) + minute * 20;

  it('keys in flight that follow the section rate are flat; keys left behind by sections are reported', () => {
    // Release markers live a few seconds: their count is proportional to the rate, so it grows
    // with the machine's drift.
    const following = soakTrends(
      history(
        () => 25,
        (minute) => 4 * drifting(minute),
        () => 12,
        drifting,
      ),
    );
    const keys = following.find((trend) => trend.series === 'Redis keys')!;
    assert.ok(keys.growth > keys.mean / 10, `the drift shows against time alone: ${keys.growth}`);
    assert.equal(keys.flat, true);
    // One key in ten sections never goes: the count climbs with the sections entered so far.
    let entered = 0;
    const leftBehind = new Map<number, number>();
    for (let second = 0; second <= 30 * 60; second++) {
      leftBehind.set(second, entered / 10);
      entered += drifting(second / 60) / 60;
    }
    const leaking = flatness(
      history(
        () => 25,
        (minute) => 4 * drifting(minute) + leftBehind.get(Math.round(minute * 60))!,
        () => 12,
        drifting,
      ),
    );
    assert.equal(leaking['Redis keys'], false);
  });

  it('growth that rises only together with the rate is not excused', () => {
    const rising = (minute: number): number => 1_000 + minute * 30;
    const found = flatness(
      history(
        () => 25,
        (minute) => 4 * rising(minute),
        () => 12,
        rising,
      ),
    );
    assert.equal(found['Redis keys'], false);
  });
});
