import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it, mock } from 'node:test';
import { TimeoutList } from '../../src/engine/timeout-list.js';

describe('TimeoutList', () => {
  beforeEach(() => mock.timers.enable({ apis: ['setTimeout', 'Date'], now: 1_000_000 }));
  afterEach(() => mock.timers.reset());

  function recording(delayMs: number): { list: TimeoutList<string>; timedOut: string[] } {
    const timedOut: string[] = [];
    const list = new TimeoutList<string>(delayMs, (value) => timedOut.push(`${value}@${Date.now()}`));
    return { list, timedOut };
  }

  it('times each entry out its delay after it was added, in order', () => {
    const { list, timedOut } = recording(100);
    list.add('a');
    mock.timers.tick(30);
    list.add('b');
    mock.timers.tick(69);
    assert.deepEqual(timedOut, []);
    mock.timers.tick(1);
    assert.deepEqual(timedOut, ['a@1000100']);
    mock.timers.tick(30);
    assert.deepEqual(timedOut, ['a@1000100', 'b@1000130']);
  });

  it('never times out a removed entry, wherever it sits in the list', () => {
    const { list, timedOut } = recording(100);
    const first = list.add('first');
    const middle = list.add('middle');
    list.add('kept');
    const last = list.add('last');
    list.remove(middle);
    list.remove(first);
    list.remove(last);
    list.remove(last); // twice is harmless
    mock.timers.tick(100);
    assert.deepEqual(timedOut, ['kept@1000100']);
  });

  it('keeps working after it ran empty', () => {
    const { list, timedOut } = recording(50);
    list.remove(list.add('settled'));
    mock.timers.tick(50);
    list.add('later');
    mock.timers.tick(49);
    assert.deepEqual(timedOut, []);
    mock.timers.tick(1);
    assert.deepEqual(timedOut, ['later@1000100']);
  });
});
