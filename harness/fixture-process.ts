/**
 * Second OS processes running TypeScript (through tsx): the fixtures under test/fixtures/ that
 * hold locks in another process, or any file. Each is killed when the test file ends, or when the
 * runner ends the test file by signal.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { atFileEnd } from './cleanup.js';

/** A second OS process running a TypeScript fixture (through tsx), killed when the test file ends. */
export interface FixtureProcess {
  readonly child: ChildProcess;
  /** Lines the child printed on stdout so far. */
  readonly lines: readonly string[];
  /** Resolves when the child has printed `line`; rejects if it exits first or `timeoutMs` passes. */
  waitFor(line: string, timeoutMs?: number): Promise<void>;
  /** Resolves with the exit code (null when killed by a signal). */
  readonly exited: Promise<number | null>;
}

const running = new Set<ChildProcess>();
const killAll = (): void => {
  for (const child of running) child.kill('SIGKILL');
};
atFileEnd(killAll);
// A test file the runner times out is ended by signal, and `after` does not run then: take the
// children along, then die of the same signal.
for (const signal of ['SIGTERM', 'SIGHUP'] as const) {
  process.once(signal, () => {
    killAll();
    process.kill(process.pid, signal);
  });
}

/** Starts `test/fixtures/<name>.ts` with `args`. */
export function startFixture(
  name: string,
  args: readonly (string | number)[],
  env: NodeJS.ProcessEnv = {},
): FixtureProcess {
  const file = fileURLToPath(new URL(`../test/fixtures/${name}.ts`, import.meta.url));
  return startTs(file, args, env);
}

/** Starts any TypeScript file with `node --import tsx`. */
export function startTs(file: string, args: readonly (string | number)[], env: NodeJS.ProcessEnv = {}): FixtureProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', file, ...args.map(String)], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  running.add(child);
  const lines: string[] = [];
  const listeners = new Set<() => void>();
  createInterface({ input: child.stdout }).on('line', (line) => {
    lines.push(line);
    for (const listener of listeners) listener();
  });
  const exited = new Promise<number | null>((resolve) => {
    child.once('exit', (code) => {
      running.delete(child);
      // Let the last stdout lines arrive before anyone waiting learns of the exit.
      setImmediate(() => {
        for (const listener of listeners) listener();
        resolve(code);
      });
    });
  });
  let exitedFlag = false;
  void exited.then(() => (exitedFlag = true));
  const waitFor = (line: string, timeoutMs = 20_000): Promise<void> =>
    new Promise((resolve, reject) => {
      const check = (): void => {
        if (lines.includes(line)) finish(resolve);
        else if (exitedFlag || child.exitCode !== null || child.signalCode !== null)
          finish(() => reject(new Error(`fixture exited before printing "${line}"; printed: ${lines.join(' | ')}`)));
      };
      const timer = setTimeout(
        () => finish(() => reject(new Error(`fixture did not print "${line}" within ${timeoutMs} ms`))),
        timeoutMs,
      );
      const finish = (settle: () => void): void => {
        clearTimeout(timer);
        listeners.delete(check);
        settle();
      };
      listeners.add(check);
      check();
    });
  return { child, lines, waitFor, exited };
}
