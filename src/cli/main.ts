#!/usr/bin/env node
import { parseArgs } from 'node:util';
import type { WorkerSettings } from './demo-worker.js';

const USAGE = `Usage: latchkey <command> [options]

Commands:
  demo [--workers N] [--products N] [--stock N] [--seconds N]
                          worker processes buy products under per-product locks
  inspect [pattern]       held locks, owners, hold counts, TTLs, waiters, permits
  unlock NAME --force     delete the lock NAME whoever holds it
  bench [--quick]         latchkey against redlock and redis-semaphore (from a clone)

Options:
  --url URL               Redis to talk to (default: REDIS_URL; demo starts its own without one)
  --prefix PREFIX         latchkey key prefix (default: latchkey:)
`;

async function main(argv: readonly string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === 'demo-worker') {
    const { runWorker } = await import('./demo-worker.js');
    await runWorker(JSON.parse(rest[0]!) as WorkerSettings, (message) => process.send?.(message));
    // The callback fires once every earlier message went out; then the IPC channel may close.
    await new Promise<void>((resolve) => (process.send ? process.send({ type: 'exit' }, () => resolve()) : resolve()));
    process.disconnect?.();
    return 0;
  }
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: {
      url: { type: 'string' },
      prefix: { type: 'string', default: 'latchkey:' },
      force: { type: 'boolean', default: false },
      quick: { type: 'boolean', default: false },
      workers: { type: 'string', default: '6' },
      products: { type: 'string', default: '8' },
      stock: { type: 'string', default: '150' },
      seconds: { type: 'string', default: '25' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help || command === undefined || command === 'help') {
    process.stdout.write(USAGE);
    return command === undefined ? 1 : 0;
  }
  const url = values.url ?? process.env.REDIS_URL;
  switch (command) {
    case 'demo': {
      const { runDemo } = await import('./demo.js');
      const count = (name: 'workers' | 'products' | 'stock' | 'seconds'): number => {
        const value = Number(values[name]);
        if (!Number.isSafeInteger(value) || value < 1)
          throw new RangeError(`--${name} must be an integer >= 1, got ${values[name]}`);
        return value;
      };
      const ok = await runDemo({
        workers: count('workers'),
        products: count('products'),
        stock: count('stock'),
        seconds: count('seconds'),
      });
      return ok ? 0 : 1;
    }
    case 'inspect': {
      const { inspect } = await import('./inspect.js');
      await inspect(requireUrl(url), values.prefix, positionals[0] ?? '*');
      return 0;
    }
    case 'unlock': {
      const { forceUnlock } = await import('./inspect.js');
      if (!positionals[0] || !values.force) throw new Error('usage: latchkey unlock NAME --force');
      return (await forceUnlock(requireUrl(url), values.prefix, positionals[0])) ? 0 : 1;
    }
    case 'bench': {
      const { runBenchCommand } = await import('./bench.js');
      return runBenchCommand(values.quick);
    }
    default:
      process.stderr.write(`Unknown command "${command}"\n\n${USAGE}`);
      return 1;
  }
}

function requireUrl(url: string | undefined): string {
  if (!url) throw new Error('Give the Redis to inspect with --url redis://host:port or REDIS_URL');
  return url;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`latchkey: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  },
);
