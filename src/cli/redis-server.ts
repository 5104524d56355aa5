/**
 * Starting a private redis-server on a free loopback port: the demo's, and the harness' for tests,
 * bench and faults.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';

/** A private redis-server process on a free loopback port, for tests, the demo and the bench. */
export interface RedisProcess {
  readonly port: number;
  readonly host: '127.0.0.1';
  readonly url: string;
  readonly child: ChildProcess;
  /** SIGSTOP: the server stops answering but keeps its connections open. */
  freeze(): void;
  /** SIGCONT after freeze(). */
  resume(): void;
  /** Stops the server (SIGKILL when `hard`) and removes its directory. */
  stop(hard?: boolean): Promise<void>;
}

const INSTALL_HINT =
  'redis-server (or valkey-server) was not found. Install it (Debian/Ubuntu: `sudo apt-get install redis-server`, ' +
  'macOS: `brew install redis`) or point REDIS_SERVER_BIN at the binary (`REDIS_SERVER_BIN=valkey-server` runs Valkey).';

/** The first executable named `name` on PATH. */
function onPath(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not in this directory
    }
  }
  return undefined;
}

/**
 * The server binary: REDIS_SERVER_BIN (a path, or a name looked up on PATH: `valkey-server`), else
 * `redis-server` on PATH, else `valkey-server` on PATH.
 */
export function findRedisServer(): string {
  const explicit = process.env.REDIS_SERVER_BIN;
  if (explicit) return explicit.includes('/') ? explicit : (onPath(explicit) ?? explicit);
  const found = onPath('redis-server') ?? onPath('valkey-server');
  if (found) return found;
  throw new Error(INSTALL_HINT);
}

/** A port that was free a moment ago. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}

/**
 * Sends `signal` to a child by its PID. Not `child.kill()`: Deno's marks a child killed after its
 * first signal and sends nothing after it (a SIGCONT, then SIGTERM, never arrived), and gives the
 * first signal's name as `signalCode` while the child still runs.
 */
export function signalChild(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined || child.exitCode !== null) return;
  try {
    process.kill(child.pid, signal);
  } catch {
    // already gone
  }
}

const running = new Set<ChildProcess>();
const killAll = (): void => {
  for (const child of running) signalChild(child, 'SIGKILL');
};
process.once('exit', killAll);
// A runner that times a test file out, or a terminal that closes, ends this process by signal:
// take the servers along (the 'exit' event does not fire then), then die of the same signal.
for (const signal of ['SIGTERM', 'SIGHUP'] as const) {
  process.once(signal, () => {
    killAll();
    process.kill(process.pid, signal);
  });
}

/** Options of startRedisServer. */
export interface StartRedisServerOptions {
  /** A process group of its own, so that a terminal's Ctrl-C reaches only its parent. */
  detached?: boolean;
  /**
   * Stop the server when this process dies in a way that runs none of its code (SIGKILL, a crash):
   * a sidecar `sh` waits for the end of a pipe that only this process holds open.
   */
  stopWithParent?: boolean;
  /**
   * Listen on this port instead of a free one (restarting a server where its clients look for
   * it). No other port is tried: the start fails if the port is taken.
   */
  port?: number;
}

/**
 * Starts a redis-server with no persistence. `extraArgs` are passed as command-line config;
 * `leadingArgs` come first (a config file, for Sentinel). `detached` puts it in a process group
 * of its own, so that a terminal's Ctrl-C reaches only its parent, which stops it in order.
 */
export async function startRedisServer(
  extraArgs: readonly string[] = [],
  leadingArgs: readonly string[] = [],
  { detached = false, port: fixedPort, stopWithParent = false }: StartRedisServerOptions = {},
): Promise<RedisProcess> {
  const bin = findRedisServer();
  const started = async (): Promise<RedisProcess> => {
    if (fixedPort !== undefined) return launch(bin, fixedPort, extraArgs, leadingArgs, detached);
    let lastError: unknown;
    for (let tries = 0; tries < 5; tries++) {
      const port = await freePort();
      try {
        return await launch(bin, port, extraArgs, leadingArgs, detached);
      } catch (error) {
        lastError = error; // most likely the port was taken meanwhile: try another
      }
    }
    throw lastError instanceof Error ? lastError : new Error(String(lastError));
  };
  const server = await started();
  return stopWithParent ? watchedByParent(server) : server;
}

/**
 * The server, stopped by a sidecar when this process is gone: `cat` reads a pipe whose only writer
 * is this process, so it sees its end however this process ends, and the sidecar then sends the
 * server SIGTERM. Dismissed (killed first) when the server stops or exits otherwise, so that it
 * never signals a PID the system gave to another process since.
 */
function watchedByParent(server: RedisProcess): RedisProcess {
  const watcher = spawn('sh', ['-c', 'cat >/dev/null; kill -TERM "$1" 2>/dev/null', 'sh', String(server.child.pid)], {
    stdio: ['pipe', 'ignore', 'ignore'],
    detached: true,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
  });
  watcher.on('error', () => undefined);
  watcher.stdin?.on('error', () => undefined);
  // Neither keeps this process alive: it is there for when this process is gone.
  watcher.unref();
  (watcher.stdin as { unref?(): void } | null)?.unref?.();
  const dismiss = (): void => {
    signalChild(watcher, 'SIGKILL');
    watcher.stdin?.destroy();
  };
  server.child.once('exit', dismiss);
  return {
    ...server,
    async stop(hard) {
      dismiss();
      await server.stop(hard);
    },
  };
}

function launch(
  bin: string,
  port: number,
  extraArgs: readonly string[],
  leadingArgs: readonly string[],
  detached: boolean,
): Promise<RedisProcess> {
  const dir = mkdtempSync(join(tmpdir(), 'latchkey-redis-'));
  const args = [...leadingArgs, '--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'];
  args.push('--dir', dir, '--daemonize', 'no', ...extraArgs);
  const child = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'], detached });
  running.add(child);
  let output = '';
  let gone = false;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  void exited.then(() => (gone = true));
  const cleanup = (): void => {
    running.delete(child);
    rmSync(dir, { recursive: true, force: true });
  };
  void exited.then(cleanup);
  const server: RedisProcess = {
    port,
    host: '127.0.0.1',
    url: `redis://127.0.0.1:${port}`,
    child,
    freeze: () => signalChild(child, 'SIGSTOP'),
    resume: () => signalChild(child, 'SIGCONT'),
    async stop(hard = false) {
      if (gone) return;
      signalChild(child, 'SIGCONT');
      signalChild(child, hard ? 'SIGKILL' : 'SIGTERM');
      await exited;
    },
  };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => fail(new Error(`redis-server did not start on port ${port}: ${output}`)), 10_000);
    const fail = (error: Error): void => {
      clearTimeout(timer);
      signalChild(child, 'SIGKILL');
      reject(error);
    };
    child.once('error', (error) => fail(new Error(`could not run ${bin}: ${error.message}. ${INSTALL_HINT}`)));
    const onExit = (code: number | null): void =>
      fail(new Error(`redis-server exited (${code}) on port ${port}: ${output}`));
    child.once('exit', onExit);
    const onData = (chunk: Buffer): void => {
      output += chunk.toString();
      // A Sentinel never says "Ready"; it is serving once it has an ID.
      if (output.includes('Ready to accept connections') || output.includes('Sentinel ID is')) {
        clearTimeout(timer);
        child.off('exit', onExit);
        child.stdout?.off('data', onData);
        child.stdout?.resume();
        child.stderr?.resume();
        resolve(server);
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
  });
}
