import { defineConfig } from 'tsdown';

export default defineConfig([
  {
    // The library: ESM and CommonJS with type declarations for each.
    entry: { index: 'src/index.ts', rx: 'src/rx.ts', otel: 'src/otel.ts' },
    format: ['esm', 'cjs'],
    dts: true,
    platform: 'node',
    target: 'node20',
    clean: true,
    sourcemap: true,
  },
  {
    // The CLI (`npx latchkey`): ESM only, no declarations; it imports the library from its own entry.
    entry: { 'cli/main': 'src/cli/main.ts' },
    format: ['esm'],
    dts: false,
    platform: 'node',
    target: 'node20',
    clean: false,
    sourcemap: true,
  },
]);
