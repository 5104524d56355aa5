import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** `latchkey bench`: runs the repository's benchmark (it needs the peers, which only a clone has). */
export function runBenchCommand(quick: boolean): Promise<number> {
  const script = ['../../bench/run.ts', '../bench/run.ts']
    .map((path) => fileURLToPath(new URL(path, import.meta.url)))
    .find(existsSync);
  if (!script) {
    process.stderr.write('The benchmark runs from a clone of the repository: npm install && npm run bench\n');
    return Promise.resolve(1);
  }
  const child = spawn(process.execPath, ['--import', 'tsx', script, ...(quick ? ['--quick'] : [])], {
    stdio: 'inherit',
  });
  return new Promise((resolve) => child.once('exit', (code) => resolve(code ?? 1)));
}
