import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { connect } from 'node:net';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const main = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));

function runDemo(args: readonly string[]) {
  const env = { ...process.env };
  delete env.REDIS_URL; // the demo must start its own server
  return spawn(process.execPath, ['--import', 'tsx', main, 'demo', ...args], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

describe('npm run demo', () => {
  it('sells everything with a private server, no overlap, stock equal to orders', async () => {
    const child = runDemo(['--workers', '3', '--products', '3', '--stock', '15', '--seconds', '20']);
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    assert.equal(code, 0, output);
    assert.match(output, /orders\s+45 in/);
    assert.match(output, /45 at start, 0 left, 45 sold \(equal to the orders\)/);
    assert.match(output, /overlaps seen\s+0/);
    assert.match(output, /verdict\s+OK/);
    const port = Number(/private redis-server on port (\d+)/.exec(output)?.[1]);
    assert.equal(await portOpen(port), false, 'the private server was stopped');
  });

  it('Ctrl-C stops every worker and the server it started', async () => {
    const child = runDemo(['--workers', '2', '--products', '2', '--stock', '100000', '--seconds', '60']);
    let output = '';
    const started = new Promise<number>((resolve) => {
      child.stdout.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        const port = /private redis-server on port (\d+)/.exec(output)?.[1];
        if (port && /items sold/.test(output)) resolve(Number(port));
      });
    });
    const port = await started;
    assert.equal(await portOpen(port), true);
    child.kill('SIGINT');
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    assert.equal(code, 130);
    assert.equal(await portOpen(port), false);
  });
});
