import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** The CLI from source, as `npx latchkey` runs its build. */
export const MAIN = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));

/** Starts `latchkey ...args`; `output()` resolves with its streams and exit code once it ends. */
export function startCli(
  args: readonly string[],
  options: SpawnOptions = {},
): ChildProcess & { output(): Promise<{ code: number | null; stdout: string; stderr: string }> } {
  const child = spawn(process.execPath, ['--import', 'tsx', MAIN, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    ...options,
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const done = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
    child.once('close', (code) => resolve({ code, stdout, stderr })),
  );
  return Object.assign(child, { output: () => done });
}

/** Runs `latchkey ...args` to its end. */
export function cli(
  args: readonly string[],
  options: SpawnOptions = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return startCli(args, options).output();
}
