import assert from 'node:assert/strict';
import diagnosticsChannel from 'node:diagnostics_channel';
import { before, describe, it } from 'node:test';
import { diagnosticsChannels } from '../src/index.js';
import { sleep } from '../harness/eventually.js';
import { startServer, type TestServer } from '../harness/server.js';

let server: TestServer;
before(async () => {
  server = await startServer();
});

function record(name: string): { messages: Record<string, unknown>[]; stop: () => void } {
  const messages: Record<string, unknown>[] = [];
  const listener = (message: unknown): void => void messages.push(message as Record<string, unknown>);
  diagnosticsChannel.subscribe(name, listener);
  return { messages, stop: () => diagnosticsChannel.unsubscribe(name, listener) };
}

describe('diagnostics channels', () => {
  it('declares latchkey:<area>:<event> channels', () => {
    assert.deepEqual(
      Object.values(diagnosticsChannels).map((channel) => channel.name),
      [
        'latchkey:lock:acquire',
        'latchkey:lock:release',
        'latchkey:lock:renew',
        'latchkey:lock:lost',
        'latchkey:lock:wait',
        'latchkey:client:warning',
      ],
    );
  });

  it('publishes acquire, wait, renew, release and lost', async () => {
    const acquire = record('latchkey:lock:acquire');
    const release = record('latchkey:lock:release');
    const renew = record('latchkey:lock:renew');
    const wait = record('latchkey:lock:wait');
    const lost = record('latchkey:lock:lost');
    try {
      const locks = server.lockClient({ watchdogTimeout: 300 });
      const holder = locks.getLock('observed');
      await holder.lock();
      const waiter = locks.getLock('observed');
      const waiting = waiter.lock();
      await sleep(250);
      await holder.unlock();
      await waiting;
      await server.client().del('latchkey:{observed}:lock');
      await sleep(400);
      assert.ok(acquire.messages.length >= 2 && acquire.messages[0]!.name === 'observed');
      assert.equal(release.messages[0]!.holds, 0);
      assert.ok(renew.messages.some((message) => message.name === 'observed'));
      assert.deepEqual(
        wait.messages.map((message) => message.phase),
        ['start', 'end'],
      );
      assert.equal(lost.messages.length, 1);
      // Told by Redis or found by the next renewal (every 100 ms here), whichever comes first.
      assert.match(
        String(lost.messages[0]!.reason),
        /Redis told that its key was deleted|renewal found it no longer held/,
      );
    } finally {
      for (const channel of [acquire, release, renew, wait, lost]) channel.stop();
    }
  });
});
