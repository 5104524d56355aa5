import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it, mock } from 'node:test';
import { FixedDelayQueue } from '../../src/engine/fixed-delay-queue.js';

describe('FixedDelayQueue', () => {
  beforeEach(() => mock.timers.enable({ apis: ['setTimeout', 'Date'], now: 1_000_000 }));
  afterEach(() => mock.timers.reset());

  function recording(delayMs: number): { queue: FixedDelayQueue<string, number>; ran: [string, number, number][] } {
    const ran: [string, number, number][] = [];
    const queue = new FixedDelayQueue<string, number>(delayMs, (key, value) => ran.push([key, value, Date.now()]));
    return { queue, ran };
  }

  it('runs each entry its delay after it was added, in order, with its value', () => {
    const { queue, ran } = recording(100);
    queue.add('a', 1);
    mock.timers.tick(30);
    queue.add('b', 2);
    mock.timers.tick(69);
    assert.deepEqual(ran, []);
    mock.timers.tick(1);
    assert.deepEqual(ran, [['a', 1, 1_000_100]]);
    mock.timers.tick(30);
    assert.deepEqual(ran, [
      ['a', 1, 1_000_100],
      ['b', 2, 1_000_130],
    ]);
    assert.equal(queue.size, 0);
  });

  it('never runs a deleted entry, and runs the others on time', () => {
    const { queue, ran } = recording(100);
    queue.add('a', 1);
    mock.timers.tick(10);
    queue.add('b', 2);
    queue.delete('a');
    mock.timers.tick(90);
    assert.deepEqual(ran, []);
    mock.timers.tick(10);
    assert.deepEqual(ran, [['b', 2, 1_000_110]]);
  });

  it('re-adding a key moves it to a full delay from then, with the new value', () => {
    const { queue, ran } = recording(100);
    queue.add('a', 1);
    mock.timers.tick(60);
    queue.add('a', 2);
    mock.timers.tick(60);
    assert.deepEqual(ran, []);
    mock.timers.tick(40);
    assert.deepEqual(ran, [['a', 2, 1_000_160]]);
  });

  it('times an entry added while the queue runs others', () => {
    const ran: string[] = [];
    const queue: FixedDelayQueue<string, null> = new FixedDelayQueue<string, null>(50, (key) => {
      ran.push(`${key}@${Date.now()}`);
      if (key === 'a') queue.add('again', null);
    });
    queue.add('a', null);
    mock.timers.tick(50);
    mock.timers.tick(50);
    assert.deepEqual(ran, ['a@1000050', 'again@1000100']);
  });

  it('clear() drops everything', () => {
    const { queue, ran } = recording(100);
    queue.add('a', 1);
    queue.clear();
    mock.timers.tick(500);
    assert.deepEqual(ran, []);
    assert.equal(queue.size, 0);
  });
});
