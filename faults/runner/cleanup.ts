/**
 * Everything the runner started (servers, proxies, workers, timers) registers how to stop it here,
 * so that a failure, an exception or Ctrl-C never leaves a process or a frozen server behind.
 */
const cleanups = new Set<() => Promise<void> | void>();

/** Registers `fn`; returns a function that runs it now (once) and forgets it. */
export function onCleanup(fn: () => Promise<void> | void): () => Promise<void> {
  cleanups.add(fn);
  return async () => {
    if (!cleanups.delete(fn)) return;
    await fn();
  };
}

/** Runs every registered cleanup, newest first; failures are ignored (the rest must still run). */
export async function cleanupAll(): Promise<void> {
  const all = [...cleanups].reverse();
  cleanups.clear();
  for (const fn of all) {
    try {
      await fn();
    } catch {
      // keep going: the next one may be the process that matters
    }
  }
}

/**
 * Ctrl-C or a kill: clean up, then exit with the conventional code. An exception nothing caught
 * (a bug of the runner's, or of latchkey in the runner's own clients) is printed with its stack,
 * first, and cleaned up after too: a frozen server must not outlive the run.
 */
export function cleanupOnSignals(): void {
  const crash = (error: unknown): void => {
    process.stderr.write(
      `\nRUNNER CRASHED: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    void cleanupAll().finally(() => process.exit(70));
  };
  process.once('uncaughtException', crash);
  process.once('unhandledRejection', crash);
  for (const [signal, code] of [
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const) {
    process.once(signal, () => {
      process.stderr.write(`\n${signal}: stopping every worker, proxy and server...\n`);
      void cleanupAll().finally(() => process.exit(code));
    });
  }
}
