import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Cluster as ValkeyCluster } from 'iovalkey';
import { createCluster } from 'redis4';
import { bunRedisConnection, LockClient } from '../../src/index.js';

/** The TypeError `new LockClient(value)` throws. */
function refusal(value: unknown): TypeError {
  try {
    new LockClient(value as never);
  } catch (error) {
    assert.ok(error instanceof TypeError, String(error));
    return error;
  }
  assert.fail('the client was accepted');
}

describe('a client latchkey cannot use is refused with what it got and what it takes', () => {
  it('names every supported client, GLIDE and Bun among them', () => {
    const { message } = refusal({ get: () => undefined });
    assert.match(message, /got a plain object/);
    for (const supported of ['ioredis', 'iovalkey', 'node-redis', 'createCluster', 'GLIDE', 'Bun', 'RedisConnection'])
      assert.ok(message.includes(supported), `${supported} in: ${message}`);
  });

  it("node-redis 4's `await createCluster().connect()`, undefined, says so and how to connect", async () => {
    const cluster = createCluster({ rootNodes: [{ url: 'redis://127.0.0.1:1' }] });
    // v4's connect() resolves undefined (here it fails first: nothing listens on port 1).
    const connected = await cluster.connect().catch(() => undefined);
    assert.equal(connected, undefined);
    assert.match(
      refusal(connected).message,
      /got undefined \(node-redis 4: `await client.connect\(\)` resolves undefined/,
    );
  });

  it('names the class of an unknown client, and a promise not awaited', () => {
    class SomeClient {}
    assert.match(refusal(new SomeClient()).message, /got an instance of SomeClient/);
    assert.match(refusal(Promise.resolve()).message, /got a Promise \(await it first\)/);
    assert.match(refusal('redis://localhost').message, /got a string/);
  });

  it("refuses iovalkey's Cluster, which subscribes on one node only", () => {
    const cluster = new ValkeyCluster([{ host: '127.0.0.1', port: 1 }], { lazyConnect: true });
    assert.match(refusal(cluster).message, /support sharded subscribers/);
    cluster.disconnect();
  });

  it("asks a Bun client for its URL, and checks the URL's scheme", () => {
    const bun = { send: () => Promise.resolve(null), connected: true, evalsha: () => null, duplicate: () => null };
    assert.match(refusal(bun).message, /bunRedisConnection\(client, url\)/);
    assert.throws(() => bunRedisConnection(bun, 'http://localhost'), /redis:\/\/ or rediss:\/\//);
  });

  it('refuses a GLIDE client whose configuration it cannot read', () => {
    const glide = { invokeScript: () => null, customCommand: () => null, close: () => undefined };
    assert.match(refusal(glide).message, /Valkey GLIDE client, to keep the configuration/);
  });
});
