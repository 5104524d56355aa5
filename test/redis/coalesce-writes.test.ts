import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { WriteCoalescer, type CorkableStream } from '../../src/redis/coalesce-writes.js';

/** A socket stand-in that logs what the coalescer does to it, between the writes sent through it. */
function recordingStream(name: string, log: string[]): CorkableStream & { writable: boolean } {
  return {
    writable: true,
    cork: () => log.push(`${name}:cork`),
    uncork: () => log.push(`${name}:uncork`),
  };
}

function send(coalescer: WriteCoalescer, stream: CorkableStream, log: string[], what: string): void {
  coalescer.beforeWrite(stream);
  log.push(what);
  coalescer.afterWrite();
}

const tickEnd = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('WriteCoalescer', () => {
  it('sends the first write of a tick at once and corks the rest until the tick ends', async () => {
    const log: string[] = [];
    const coalescer = new WriteCoalescer();
    const socket = recordingStream('s', log);
    send(coalescer, socket, log, 'w1');
    send(coalescer, socket, log, 'w2');
    send(coalescer, socket, log, 'w3');
    assert.deepEqual(log, ['w1', 's:cork', 'w2', 'w3']);
    await tickEnd();
    assert.deepEqual(log, ['w1', 's:cork', 'w2', 'w3', 's:uncork']);

    // The next tick starts over: its first write is not held back.
    log.length = 0;
    send(coalescer, socket, log, 'w4');
    await tickEnd();
    assert.deepEqual(log, ['w4']);
  });

  it('lets a full batch leave at once instead of holding a whole burst to the end of the tick', async () => {
    const log: string[] = [];
    const coalescer = new WriteCoalescer();
    const socket = recordingStream('s', log);
    for (let i = 0; i < 18; i++) send(coalescer, socket, log, 'w');
    await tickEnd();
    const flushes = log.filter((entry) => entry === 's:uncork').length;
    // 17 corked after the first: one batch of 16 flushed mid-tick, the 17th at the tick's end.
    assert.equal(flushes, 2);
    assert.equal(log.indexOf('s:uncork'), 1 + 1 + 16);
    assert.equal(log.at(-1), 's:uncork');
  });

  it('flushes the old socket when a reconnect brings a new one mid-tick, and leaves unwritable ones alone', async () => {
    const log: string[] = [];
    const coalescer = new WriteCoalescer();
    const old = recordingStream('old', log);
    send(coalescer, old, log, 'w1');
    send(coalescer, old, log, 'w2');
    const fresh = recordingStream('new', log);
    send(coalescer, fresh, log, 'w3');
    const closed = recordingStream('closed', log);
    closed.writable = false;
    send(coalescer, closed, log, 'w4');
    await tickEnd();
    assert.deepEqual(log, ['w1', 'old:cork', 'w2', 'old:uncork', 'w3', 'w4']);
  });
});
