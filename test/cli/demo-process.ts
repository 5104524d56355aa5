/** The demo as a process under test: started in a group of its own, its workers found by a tag. */
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { startCli, type Runtime } from './run-cli.js';

/** The demo in a process group of its own (as a terminal runs it), tagged so its workers can be found. */
export function runDemo(args: readonly string[], env: Record<string, string> = {}, runtime: Runtime = 'node') {
  const tag = randomUUID();
  const childEnv: NodeJS.ProcessEnv = { ...process.env, LATCHKEY_DEMO_TEST: tag, ...env };
  if (!env.REDIS_URL) delete childEnv.REDIS_URL; // the demo must start its own server
  const child = startCli(['demo', ...args], { env: childEnv, detached: true }, runtime);
  return Object.assign(child, { tag });
}

/** Processes still alive that carry `tag` in their environment (the demo's workers inherit it). */
export function processesTagged(tag: string): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/environ`, 'utf8').includes(`LATCHKEY_DEMO_TEST=${tag}`);
      } catch {
        return false; // gone, or not ours to read
      }
    })
    .map(Number);
}

/** After a failed assertion: SIGTERM (not SIGKILL), so that the demo still stops its own redis-server. */
export function stopIfRunning(child: ReturnType<typeof runDemo>): void {
  if (child.exitCode === null && child.signalCode === null) {
    try {
      process.kill(-child.pid!, 'SIGTERM');
    } catch {
      // already gone
    }
  }
}

export function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** Resolves with the private server's port once the workers sell. */
export function selling(child: ReturnType<typeof runDemo>): Promise<number> {
  let output = '';
  return new Promise((resolve) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const port = /private redis-server on port (\d+)/.exec(output)?.[1];
      if (/ [1-9]\d*\/\d+ items sold by/.test(output)) resolve(Number(port ?? 0));
    });
  });
}
