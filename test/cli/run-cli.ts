import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** The CLI from source, as `npx latchkey` runs its build. */
export const MAIN = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));

/** The built CLI (`npm test` builds first), for the runtimes that run it as a user's `npx latchkey` would. */
const BUILT = fileURLToPath(new URL('../../dist/cli/main.mjs', import.meta.url));
const BIN = fileURLToPath(new URL('../../node_modules/.bin/', import.meta.url));

/** The runtimes the CLI is tested under: Node from source, Bun and Deno (the npm packages') on the build. */
export type Runtime = 'node' | 'bun' | 'deno';
const COMMAND: Record<Runtime, readonly string[]> = {
  node: [process.execPath, '--import', 'tsx', MAIN],
  bun: [`${BIN}bun`, BUILT],
  deno: [`${BIN}deno`, 'run', '-A', BUILT],
};

/** Starts `latchkey ...args`; `output()` resolves with its streams and exit code once it ends. */
export function startCli(
  args: readonly string[],
  options: SpawnOptions = {},
  runtime: Runtime = 'node',
): ChildProcess & { output(): Promise<{ code: number | null; stdout: string; stderr: string }> } {
  const [command, ...leading] = COMMAND[runtime];
  const child = spawn(command!, [...leading, ...args], {
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
