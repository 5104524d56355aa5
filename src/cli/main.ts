#!/usr/bin/env node
/**
 * The `latchkey` command: parses the arguments, runs the command, and exits with its status
 * (one line on stderr for an error).
 */
import { readFileSync } from 'node:fs';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { CliError, EXIT } from './exit.js';
import { USAGE } from './usage.js';

type Options = NonNullable<ParseArgsConfig['options']>;

const CONNECTION: Options = {
  url: { type: 'string' },
  sentinel: { type: 'string' },
  name: { type: 'string' },
  prefix: { type: 'string', default: 'latchkey:' },
  timeout: { type: 'string', default: '5000' },
  help: { type: 'boolean', short: 'h' },
};

const COMMANDS: Record<string, Options> = {
  inspect: { ...CONNECTION, json: { type: 'boolean' }, watch: { type: 'boolean' }, interval: { type: 'string' } },
  unlock: { ...CONNECTION, force: { type: 'boolean' }, kind: { type: 'string' } },
  run: {
    ...CONNECTION,
    lock: { type: 'string' },
    wait: { type: 'string' },
    watchdog: { type: 'string' },
    fenced: { type: 'boolean' },
    'kill-after': { type: 'string', default: '5000' },
  },
  demo: {
    workers: { type: 'string', default: '6' },
    products: { type: 'string', default: '8' },
    stock: { type: 'string', default: '150' },
    seconds: { type: 'string', default: '25' },
    'no-lock': { type: 'boolean' },
    help: { type: 'boolean', short: 'h' },
  },
};

function version(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

async function main(argv: readonly string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined) {
    process.stderr.write(USAGE);
    return EXIT.usage;
  }
  if (command === '--help' || command === '-h' || command === 'help') {
    process.stdout.write(USAGE);
    return EXIT.ok;
  }
  if (command === '--version' || command === '-v') {
    process.stdout.write(`${version()}\n`);
    return EXIT.ok;
  }
  if (command === 'demo-worker') {
    const { workerMain } = await import('./demo-worker.js');
    return workerMain(rest[0]!);
  }
  const options = COMMANDS[command];
  if (!options) throw new CliError(`unknown command "${command}"; run latchkey --help`, EXIT.usage);
  // Everything after "--" is run's command, never parsed as our options.
  const split = rest.indexOf('--');
  const ours = split === -1 ? rest : rest.slice(0, split);
  const { values, positionals } = parseArgs({ args: ours, options, allowPositionals: true, strict: true });
  if (values.help) {
    process.stdout.write(USAGE);
    return EXIT.ok;
  }
  const { dispatch } = await import('./commands.js');
  return dispatch(command, values, positionals, split === -1 ? [] : rest.slice(split + 1));
}

function report(error: unknown): number {
  if (error instanceof CliError) {
    process.stderr.write(`latchkey: ${error.message}\n`);
    return error.exitCode;
  }
  const code = (error as NodeJS.ErrnoException | undefined)?.code ?? '';
  if (code.startsWith('ERR_PARSE_ARGS')) {
    process.stderr.write(`latchkey: ${(error as Error).message}; run latchkey --help\n`);
    return EXIT.usage;
  }
  if (code === 'ERR_MODULE_NOT_FOUND' && /ioredis/.test(String(error))) {
    process.stderr.write(
      'latchkey: this command needs ioredis: `npm install ioredis`, or `npx -p latchkey -p ioredis latchkey ...`\n',
    );
    return EXIT.failure;
  }
  if (
    (error as { code?: unknown }).code === 'LATCHKEY_REDIS_UNAVAILABLE' ||
    /Connection is closed/.test(String(error))
  ) {
    process.stderr.write(`latchkey: Redis stopped answering: ${(error as Error).message}\n`);
    return EXIT.unreachable;
  }
  // A bug, not a user error: the stack helps.
  process.stderr.write(`latchkey: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  return EXIT.failure;
}

main(process.argv.slice(2)).then(
  (code) => (process.exitCode = code),
  (error: unknown) => (process.exitCode = report(error)),
);
