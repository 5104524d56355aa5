/**
 * The soak's growth check: a series that grows steadily is reported, one that only wobbles is flat,
 * and the warm-up (the run's first tenth) does not count.
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
): HistoryRecord[] {
  const records: HistoryRecord[] = [];
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
});
