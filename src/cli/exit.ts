/**
 * The CLI's exit codes and its one-line errors.
 */
import { constants } from 'node:os';

/**
 * Exit codes of `latchkey`, documented in the README and `--help`. Distinct codes let a script
 * tell "Redis is down" from "you typed the URL wrong" from "the lock was busy".
 */
export const EXIT = Object.freeze({
  ok: 0,
  /** The command ran but found nothing to do (unlock: nothing was held). */
  failure: 1,
  /** Bad arguments. */
  usage: 2,
  /** The Redis URL (or Sentinel address) cannot be parsed. */
  badUrl: 3,
  /** Redis could not be reached, refused the connection, or did not answer in time. */
  unreachable: 4,
  /** run: the lock was not acquired within --wait. */
  busy: 5,
  /** run: the lock was lost while the command ran, and the command was stopped. */
  lockLost: 6,
});

/** An error the CLI reports as one line, ending the process with `exitCode`. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
    this.name = 'CliError';
  }
}

/** The exit code a shell gives a process killed by `signal`: 128 + its number. */
export function signalExitCode(signal: NodeJS.Signals): number {
  return 128 + (constants.signals[signal] ?? 0);
}
