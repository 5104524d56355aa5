import { spawn } from 'node:child_process';
import { LockAcquireTimeoutError, LockClient, type LockLease } from '../index.js';
import type { Connection } from './connect.js';
import { CliError, EXIT, signalExitCode } from './exit.js';

export interface RunOptions {
  readonly lock: string;
  /** ms to wait for the lock; undefined: as long as it takes. */
  readonly wait: number | undefined;
  /** The lease the watchdog keeps renewing; a crashed `latchkey run` frees the lock within it. */
  readonly watchdogTimeout: number | undefined;
  /** Take a FencedLock and pass its token to the command as LATCHKEY_FENCING_TOKEN. */
  readonly fenced: boolean;
  /** ms between SIGTERM and SIGKILL when the lock is lost. */
  readonly killAfter: number;
  readonly command: readonly string[];
}

const FORWARDED = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/**
 * `latchkey run --lock NAME -- COMMAND...` (as `etcdctl lock` and `consul lock`): takes the lock,
 * runs the command while the watchdog renews it, passes SIGINT/SIGTERM/SIGHUP on, stops the
 * command if the lock is lost, releases, and resolves with the command's exit code.
 */
export async function runUnderLock(
  connection: Connection,
  prefix: string,
  options: RunOptions,
  log: (line: string) => void,
): Promise<number> {
  connection.keepAlive(); // renewals must ride out a reconnect, not fail fast
  const locks = new LockClient(connection.client, {
    keyPrefix: prefix,
    ...(options.watchdogTimeout === undefined ? {} : { watchdogTimeout: options.watchdogTimeout }),
  });
  try {
    const lease = await acquire(locks, options);
    if (typeof lease === 'number') return lease;
    return await supervise(lease, options, log);
  } finally {
    await locks.shutdown();
  }
}

/** The lease, or the exit code when a signal or --wait ended the wait. */
async function acquire(locks: LockClient, options: RunOptions): Promise<LockLease | number> {
  const stop = new AbortController();
  const onSignal = (signal: NodeJS.Signals): void => stop.abort(signal);
  for (const signal of FORWARDED) process.on(signal, onSignal);
  const lock = options.fenced ? locks.getFencedLock(options.lock) : locks.getLock(options.lock);
  try {
    return await lock.acquire({
      ...(options.wait === undefined ? {} : { waitTime: options.wait }),
      signal: stop.signal,
    });
  } catch (error) {
    if (stop.signal.aborted) return signalExitCode(stop.signal.reason as NodeJS.Signals);
    if (error instanceof LockAcquireTimeoutError)
      throw new CliError(`lock "${options.lock}" is busy: not acquired within ${options.wait} ms`, EXIT.busy);
    throw error;
  } finally {
    for (const signal of FORWARDED) process.off(signal, onSignal);
  }
}

async function supervise(lease: LockLease, options: RunOptions, log: (line: string) => void): Promise<number> {
  const [file, ...args] = options.command;
  const env: NodeJS.ProcessEnv = { ...process.env, LATCHKEY_LOCK: options.lock };
  if (lease.token !== undefined) env.LATCHKEY_FENCING_TOKEN = String(lease.token);
  const child = spawn(file!, args, { stdio: 'inherit', env });
  const forward = (signal: NodeJS.Signals): void => void child.kill(signal);
  for (const signal of FORWARDED) process.on(signal, forward);
  let lost = false;
  let killTimer: NodeJS.Timeout | undefined;
  const onLost = (): void => {
    lost = true;
    const reason = lease.signal.reason instanceof Error ? lease.signal.reason.message : String(lease.signal.reason);
    log(`lost the lock "${options.lock}" (${reason}): stopping the command`);
    child.kill('SIGTERM');
    killTimer = setTimeout(() => child.kill('SIGKILL'), options.killAfter);
  };
  lease.signal.addEventListener('abort', onLost, { once: true });
  try {
    const exit = await new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve, reject) => {
      child.once('error', reject);
      child.once('exit', (code, signal) => resolve({ code, signal }));
    }).catch((error: NodeJS.ErrnoException) => {
      const why = error.code === 'ENOENT' ? 'command not found' : error.message;
      throw new CliError(`cannot run "${file}": ${why}`, 127);
    });
    if (lost) return EXIT.lockLost;
    return exit.code ?? signalExitCode(exit.signal ?? 'SIGTERM');
  } finally {
    clearTimeout(killTimer);
    lease.signal.removeEventListener('abort', onLost);
    for (const signal of FORWARDED) process.off(signal, forward);
    if (!lost)
      await lease.release().catch((error: unknown) => log(`could not release "${options.lock}": ${String(error)}`));
  }
}
