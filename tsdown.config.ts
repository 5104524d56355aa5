import { defineConfig } from 'tsdown';

export default defineConfig({
  entry: { index: 'src/index.ts', rx: 'src/rx.ts', 'cli/main': 'src/cli/main.ts' },
  format: ['esm', 'cjs'],
  dts: true,
  platform: 'node',
  target: 'node20',
  clean: true,
  sourcemap: true,
});
