/**
 * Runs one parsed `latchkey` command (inspect, unlock, run, demo) and resolves with its exit code.
 */
import { connect, type Connection, type Target } from './connect.js';
import { CliError, EXIT } from './exit.js';
import { takeSnapshot } from './inspect.js';
import { palette, renderSnapshot, wantsColor } from './render.js';

type Values = Record<string, string | boolean | (string | boolean)[] | undefined>;

/** A whole number of ms (or a count) from an option; a usage error naming it otherwise. */
function integer(values: Values, name: string, min: number): number | undefined {
  const text = values[name];
  if (text === undefined) return undefined;
  const value = Number(text);
  if (typeof text !== 'string' || !/^\d+$/.test(text.trim()) || !Number.isSafeInteger(value) || value < min)
    throw new CliError(`--${name} must be a whole number >= ${min}, got "${String(text)}"`, EXIT.usage);
  return value;
}

function target(values: Values): Target {
  return {
    url: (values.url as string | undefined) ?? process.env.REDIS_URL,
    sentinels: values.sentinel as string | undefined,
    name: values.name as string | undefined,
    timeout: integer(values, 'timeout', 1)!,
  };
}

async function withConnection(values: Values, fn: (connection: Connection) => Promise<number>): Promise<number> {
  const connection = await connect(target(values));
  try {
    return await fn(connection);
  } finally {
    connection.close();
  }
}

const log = (line: string): void => void process.stderr.write(`latchkey: ${line}\n`);

/** Runs one parsed command; resolves with the process' exit code. */
export async function dispatch(
  command: string,
  values: Values,
  positionals: readonly string[],
  after: readonly string[],
): Promise<number> {
  const prefix = values.prefix as string;
  switch (command) {
    case 'inspect': {
      if (positionals.length > 1) throw new CliError('inspect takes one PATTERN', EXIT.usage);
      const interval = integer(values, 'interval', 100) ?? 1_000;
      return withConnection(values, (connection) =>
        inspect(connection, prefix, positionals[0] ?? '*', values.json === true, values.watch === true, interval),
      );
    }
    case 'unlock': {
      const { forceUnlock, UNLOCK_KINDS } = await import('./unlock.js');
      const [name, ...extra] = positionals;
      if (!name || extra.length > 0 || values.force !== true)
        throw new CliError('usage: latchkey unlock NAME --force [--kind KIND]', EXIT.usage);
      const kind = values.kind as (typeof UNLOCK_KINDS)[number] | undefined;
      if (kind !== undefined && !UNLOCK_KINDS.includes(kind))
        throw new CliError(`--kind must be one of ${UNLOCK_KINDS.join(', ')}; got "${kind}"`, EXIT.usage);
      return withConnection(values, async (connection) => {
        const { lines, released } = await forceUnlock(connection, prefix, name, kind);
        process.stdout.write(`${lines.join('\n')}\n`);
        return released ? EXIT.ok : EXIT.failure;
      });
    }
    case 'run': {
      const { runUnderLock } = await import('./run.js');
      const lock = values.lock as string | undefined;
      if (!lock || positionals.length > 0 || after.length === 0)
        throw new CliError('usage: latchkey run --lock NAME [--wait MS] -- COMMAND [ARG...]', EXIT.usage);
      const options = {
        lock,
        wait: integer(values, 'wait', 0),
        watchdogTimeout: integer(values, 'watchdog', 1),
        fenced: values.fenced === true,
        killAfter: integer(values, 'kill-after', 0)!,
        command: after,
      };
      return withConnection(values, (connection) => runUnderLock(connection, prefix, options, log));
    }
    case 'demo': {
      const { runDemo } = await import('./demo.js');
      if (positionals.length > 0) throw new CliError(`demo takes no argument "${positionals[0]}"`, EXIT.usage);
      return runDemo({
        workers: integer(values, 'workers', 1)!,
        products: integer(values, 'products', 1)!,
        stock: integer(values, 'stock', 1)!,
        seconds: integer(values, 'seconds', 1)!,
        lock: values['no-lock'] !== true,
      });
    }
    default:
      throw new CliError(`unknown command "${command}"`, EXIT.usage);
  }
}

async function inspect(
  connection: Connection,
  prefix: string,
  pattern: string,
  json: boolean,
  watch: boolean,
  interval: number,
): Promise<number> {
  const colors = palette(!json && wantsColor(process.stdout));
  const print = async (): Promise<void> => {
    const snapshot = await takeSnapshot(connection, prefix, pattern);
    if (json) process.stdout.write(`${JSON.stringify(snapshot, null, watch ? undefined : 2)}\n`);
    else if (watch && process.stdout.isTTY) process.stdout.write(`\x1b[H\x1b[2J${renderSnapshot(snapshot, colors)}`);
    else process.stdout.write(`${renderSnapshot(snapshot, colors)}${watch ? '\n' : ''}`);
  };
  if (!watch) {
    await print();
    return EXIT.ok;
  }
  // --watch: redraw until Ctrl-C or SIGTERM, then exit 0.
  let wake: (() => void) | undefined;
  let stopped = false;
  const stop = (): void => {
    stopped = true;
    wake?.();
  };
  process.once('SIGINT', stop).once('SIGTERM', stop);
  try {
    while (!stopped) {
      await print();
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, interval);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
    return EXIT.ok;
  } finally {
    process.off('SIGINT', stop).off('SIGTERM', stop);
  }
}
