/**
 * `latchkey run --lock NAME -- COMMAND`: runs a command under a lock, stopping it if the lock is lost.
 */
import { spawn } from 'node:child_process';
import { LockAcquireTimeoutError, LockClient, type LockLease } from '../index.js';
import type { Connection } from './connect.js';
import { CliError, EXIT, signalExitCode } from './exit.js';
import { signalChild } from './redis-server.js';

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
  const signals = listenForSignals();
  try {
    const lease = await acquire(locks, options, signals);
    if (typeof lease === 'number') return lease;
    return await supervise(lease, options, log, signals);
  } finally {
    signals.stop();
    await locks.shutdown();
  }
}

/** The signals `latchkey run` passes on, heard from its start to its end. */
interface Signals {
  /** The last one received, if any. */
  readonly received: NodeJS.Signals | undefined;
  /** Where the next ones go. */
  onSignal(handler: (signal: NodeJS.Signals) => void): void;
  stop(): void;
}

/**
 * One listener for the whole run: a signal that came between two steps (the lock just taken, the
 * command being spawned) would otherwise meet Node's default, which ends latchkey at once and
 * leaves the command running, and the lock held until its lease ends.
 */
function listenForSignals(): Signals {
  let received: NodeJS.Signals | undefined;
  let handler: (signal: NodeJS.Signals) => void = () => undefined;
  const relay = (signal: NodeJS.Signals): void => {
    received = signal;
    handler(signal);
  };
  for (const signal of FORWARDED) process.on(signal, relay);
  return {
    get received() {
      return received;
    },
    onSignal: (next) => (handler = next),
    stop: () => {
      for (const signal of FORWARDED) process.off(signal, relay);
    },
  };
}

/** The lease, or the exit code when a signal or --wait ended the wait. */
async function acquire(locks: LockClient, options: RunOptions, signals: Signals): Promise<LockLease | number> {
  const stop = new AbortController();
  signals.onSignal((signal) => stop.abort(signal));
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
  }
}

async function supervise(
  lease: LockLease,
  options: RunOptions,
  log: (line: string) => void,
  signals: Signals,
): Promise<number> {
  let lost = false;
  let killTimer: NodeJS.Timeout | undefined;
  let onLost = (): void => undefined;
  try {
    // Asked to stop as the lock came: the command is not started.
    if (signals.received) return signalExitCode(signals.received);
    const [file, ...args] = options.command;
    const env: NodeJS.ProcessEnv = { ...process.env, LATCHKEY_LOCK: options.lock };
    if (lease.token !== undefined) env.LATCHKEY_FENCING_TOKEN = String(lease.token);
    const child = spawn(file!, args, { stdio: 'inherit', env });
    // In the same tick as the spawn: signal handlers run from the event loop, so none runs between.
    signals.onSignal((signal) => signalChild(child, signal));
    onLost = () => {
      lost = true;
      const reason = lease.signal.reason instanceof Error ? lease.signal.reason.message : String(lease.signal.reason);
      log(`lost the lock "${options.lock}" (${reason}): stopping the command`);
      signalChild(child, 'SIGTERM');
      killTimer = setTimeout(() => signalChild(child, 'SIGKILL'), options.killAfter);
    };
    lease.signal.addEventListener('abort', onLost, { once: true });
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
    if (!lost)
      await lease.release().catch((error: unknown) => log(`could not release "${options.lock}": ${String(error)}`));
  }
}
