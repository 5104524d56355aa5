import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import fc from 'fast-check';
import { clusterSlot } from '../../src/redis/cluster-slot.js';
import { checkDuration, MAX_DURATION_MS } from '../../src/validate.js';
import { startServer, type TestServer } from '../../harness/server.js';

let server: TestServer;
before(async () => {
  // CLUSTER KEYSLOT answers only on a server with cluster support (one node, no slots, is enough).
  server = await startServer(['--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf']);
});

describe('properties', () => {
  it('our hash slot of any key (with or without a {tag}) equals CLUSTER KEYSLOT of a real server', async () => {
    const redis = server.client();
    const key = fc.oneof(
      fc.string({ unit: 'grapheme', maxLength: 24 }),
      fc
        .tuple(fc.string({ maxLength: 8 }), fc.string({ maxLength: 8 }), fc.string({ maxLength: 8 }))
        .map(([a, b, c]) => `${a}{${b}}${c}`),
    );
    await fc.assert(
      fc.asyncProperty(key, async (candidate) => {
        assert.equal(clusterSlot(candidate), Number(await redis.call('CLUSTER', 'KEYSLOT', candidate)));
      }),
      { numRuns: 300 },
    );
  });

  it('every duration is either accepted as is or refused with an error naming the argument', () => {
    fc.assert(
      fc.property(fc.oneof(fc.double(), fc.integer(), fc.constantFrom(Number.NaN, Infinity, -0)), (value) => {
        const valid = Number.isInteger(value) && value >= 0 && value <= MAX_DURATION_MS;
        try {
          assert.equal(checkDuration(value, 'leaseTime'), value);
          assert.ok(valid);
        } catch (error) {
          assert.ok(error instanceof RangeError && /`leaseTime`/.test(error.message), String(error));
          assert.ok(!valid);
        }
      }),
    );
  });
});
