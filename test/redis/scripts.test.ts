import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { IoredisConnection } from '../../src/redis/ioredis-adapter.js';
import { allScripts, lockAcquire, lockRelease, lockStatus } from '../../src/scripts/index.js';
import { startServer, type TestServer } from '../../harness/server.js';

let server: TestServer;
before(async () => {
  server = await startServer();
});

describe('Lua scripts', () => {
  it('every script loads into a real server under the SHA1 we send with EVALSHA', async () => {
    const redis = server.client();
    assert.ok(allScripts.length > 0);
    for (const script of allScripts.flatMap((script) => (script.cluster ? [script, script.cluster] : [script]))) {
      // A shebang line (script flags) may come before the header.
      assert.match(script.source, /^(#!lua[^\n]*\n)?--\[\[ [\w/-]+: /, `${script.name} opens with its contract header`);
      assert.match(script.source, /Returns/, `${script.name} documents its return value`);
      assert.equal(await redis.script('LOAD', script.source), script.sha, script.name);
    }
  });

  it('a script that checks its slot is settled has a Cluster form, and only that form checks', () => {
    const checks = (source: string): boolean => source.includes(':never-exists');
    for (const script of allScripts) {
      assert.equal(checks(script.source), false, `${script.name} checks its slot on every server`);
      if (script.cluster) assert.equal(checks(script.cluster.source), true, `${script.name}'s Cluster form`);
    }
    assert.ok(lockRelease.cluster && lockAcquire.cluster, 'the lock scripts have a Cluster form');
  });

  it('the generated module is up to date with the .lua files', () => {
    const generator = fileURLToPath(new URL('../../scripts/build-lua.mjs', import.meta.url));
    execFileSync(process.execPath, [generator, '--check'], { stdio: 'pipe' });
  });

  it('falls back to EVAL when the server does not know the script (NOSCRIPT)', async () => {
    const redis = server.client();
    await redis.script('FLUSH');
    const connection = new IoredisConnection(redis);
    const reply = await connection.evalScript(lockStatus, ['latchkey:{none}:lock'], ['owner']);
    assert.deepEqual(reply, [0, 0, -2]);
    assert.deepEqual(await redis.script('EXISTS', lockStatus.sha), [1]);
    await connection.close();
  });
});
