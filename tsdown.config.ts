import { existsSync } from 'node:fs';
import { defineConfig } from 'tsdown';

const entry: Record<string, string> = { index: 'src/index.ts', 'cli/main': 'src/cli/main.ts' };
if (existsSync('src/rx.ts')) entry.rx = 'src/rx.ts';

export default defineConfig({
  entry,
  format: ['esm', 'cjs'],
  dts: true,
  platform: 'node',
  target: 'node20',
  clean: true,
  sourcemap: true,
});
