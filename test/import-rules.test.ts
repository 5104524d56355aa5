/**
 * The import rules of the repository, read from the sources with the TypeScript parser:
 * - no import cycle in src/. Only imports that exist at run time count: a type-only import
 *   (`import type`, or every name marked `type`) is erased by the compiler and cannot make a module
 *   load before its dependency, so a cycle through one is allowed.
 * - no tool tree imports another: src/ imports only src/; harness/ imports src/; test/, bench/ and
 *   faults/ import harness/ and src/, never each other (type-only imports count here: a type ties
 *   the trees as much as a value).
 * - the bench and the fault runner never load node:test (through the harness's clean-up list,
 *   which is for test files only).
 * Each rule is first proved to fail on a small tree made for it.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const root = fileURLToPath(new URL('..', import.meta.url));
const TREES = ['src', 'harness', 'test', 'bench', 'faults'] as const;
type Tree = (typeof TREES)[number];
/** What each tree may import besides itself. */
const MAY_IMPORT: Record<Tree, readonly Tree[]> = {
  src: [],
  harness: ['src'],
  test: ['harness', 'src'],
  bench: ['harness', 'src'],
  faults: ['harness', 'src'],
};

interface Import {
  /** The module as written (`node:test`, `ioredis`, `./x.js`). */
  readonly specifier: string;
  /** The file it names, for a relative import (`.js` read as the `.ts` beside it). */
  readonly file: string | undefined;
  readonly typeOnly: boolean;
}

/** Every .ts file under `dir` (relative to `base`), node_modules and generated output left out. */
function tsFiles(base: string, dir: string): string[] {
  const files: string[] = [];
  for (const entry of readdirSync(join(base, dir), { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (!['node_modules', 'dist', 'results'].includes(entry.name)) files.push(...tsFiles(base, path));
    } else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) files.push(path);
  }
  return files;
}

/** The static imports and re-exports of one file (relative to `base`). */
function importsOf(base: string, file: string): Import[] {
  const source = ts.createSourceFile(file, readFileSync(join(base, file), 'utf8'), ts.ScriptTarget.Latest);
  const found: Import[] = [];
  const add = (specifier: ts.Expression | undefined, typeOnly: boolean): void => {
    if (!specifier || !ts.isStringLiteral(specifier)) return;
    const text = specifier.text;
    const target = text.startsWith('.')
      ? relative(base, resolve(base, dirname(file), text)).replace(/\.js$/, '.ts')
      : undefined;
    found.push({ specifier: text, file: target, typeOnly });
  };
  for (const statement of source.statements) {
    if (ts.isImportDeclaration(statement)) {
      const clause = statement.importClause;
      const bindings = clause?.namedBindings;
      const allNamedTypes =
        !!bindings && ts.isNamedImports(bindings) && bindings.elements.every((element) => element.isTypeOnly);
      const typeOnly = !!clause && (clause.isTypeOnly || (!clause.name && allNamedTypes));
      add(statement.moduleSpecifier, typeOnly);
    } else if (ts.isExportDeclaration(statement)) {
      const clause = statement.exportClause;
      const allNamedTypes =
        !!clause && ts.isNamedExports(clause) && clause.elements.every((element) => element.isTypeOnly);
      add(statement.moduleSpecifier, statement.isTypeOnly || allNamedTypes);
    }
  }
  return found;
}

const treeOf = (file: string): Tree | undefined => TREES.find((tree) => file.split(sep)[0] === tree);

/** The repository's files under TREES (relative to `base`), with their imports. */
function graph(base: string): Map<string, Import[]> {
  const files = TREES.flatMap((tree) => {
    try {
      return tsFiles(base, tree);
    } catch {
      return []; // a tree the base does not have
    }
  });
  return new Map(files.map((file) => [file, importsOf(base, file)]));
}

/** The import cycles among `files` through run-time imports, each as its files in order. */
function cycles(imports: Map<string, Import[]>, files: readonly string[]): string[][] {
  const inScope = new Set(files);
  const found: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const visit = (file: string): void => {
    state.set(file, 'open');
    path.push(file);
    for (const { file: next, typeOnly } of imports.get(file) ?? []) {
      if (typeOnly || next === undefined || !inScope.has(next)) continue;
      if (state.get(next) === 'open') found.push([...path.slice(path.indexOf(next)), next]);
      else if (!state.has(next)) visit(next);
    }
    path.pop();
    state.set(file, 'done');
  };
  for (const file of [...files].sort()) if (!state.has(file)) visit(file);
  return found;
}

/** Imports from one tree into another that MAY_IMPORT does not allow, as `from -> to`. */
function crossings(imports: Map<string, Import[]>): string[] {
  const wrong: string[] = [];
  for (const [file, list] of imports) {
    const from = treeOf(file)!;
    for (const { file: target } of list) {
      const to = target === undefined ? undefined : treeOf(target);
      if (to === undefined || to === from || MAY_IMPORT[from].includes(to)) continue;
      wrong.push(`${file} -> ${target}`);
    }
  }
  return wrong.sort();
}

/** Files of bench/ and faults/ (their own tests aside) that load node:test, with the chain that does. */
function loadsNodeTest(imports: Map<string, Import[]>): string[] {
  const chainTo = (file: string, seen: Set<string>): string[] | undefined => {
    if (seen.has(file)) return undefined;
    seen.add(file);
    for (const { specifier, file: next, typeOnly } of imports.get(file) ?? []) {
      if (typeOnly) continue;
      if (specifier === 'node:test') return [file, specifier];
      const rest = next === undefined ? undefined : chainTo(next, seen);
      if (rest) return [file, ...rest];
    }
    return undefined;
  };
  const tools = [...imports.keys()].filter(
    (file) => (treeOf(file) === 'bench' || treeOf(file) === 'faults') && !file.endsWith('.test.ts'),
  );
  return tools.flatMap((file) => {
    const chain = chainTo(file, new Set());
    return chain ? [chain.join(' -> ')] : [];
  });
}

describe('the rules are checked: each fails on a tree made to break it', () => {
  const base = mkdtempSync(join(tmpdir(), 'latchkey-imports-'));
  after(() => rmSync(base, { recursive: true, force: true }));
  const write = (files: Record<string, string>): void => {
    for (const [file, text] of Object.entries(files)) {
      mkdirSync(dirname(join(base, file)), { recursive: true });
      writeFileSync(join(base, file), text);
    }
  };
  write({
    'src/a.ts': "import { b } from './b.js';\nexport const a = b;\n",
    'src/b.ts': "import { a } from './a.js';\nexport const b = 1;\nexport const c = () => a;\n",
    'src/types-a.ts': "import type { B } from './types-b.js';\nexport type A = B;\n",
    'src/types-b.ts': "import { type A } from './types-a.js';\nexport type B = A | 1;\n",
    'test/t.ts': "import { x } from '../bench/x.js';\nexport const t = x;\n",
    'bench/x.ts': "import { clean } from '../harness/clean.js';\nexport const x = clean;\n",
    'harness/clean.ts': "import { after } from 'node:test';\nexport const clean = after;\n",
  });
  const imports = graph(base);

  it('a cycle of run-time imports is found; one through a type-only import is not', () => {
    const srcFiles = [...imports.keys()].filter((file) => treeOf(file) === 'src');
    assert.deepEqual(cycles(imports, srcFiles), [[join('src', 'a.ts'), join('src', 'b.ts'), join('src', 'a.ts')]]);
  });

  it('test/ importing bench/ is found', () => {
    assert.deepEqual(crossings(imports), [`${join('test', 't.ts')} -> ${join('bench', 'x.ts')}`]);
  });

  it('bench/ loading node:test through the harness is found', () => {
    assert.equal(loadsNodeTest(imports).length, 1);
  });
});

describe('the repository keeps its import rules', () => {
  const imports = graph(root);

  it('reads the trees', () => {
    for (const tree of TREES)
      assert.ok(
        [...imports.keys()].some((file) => treeOf(file) === tree),
        tree,
      );
  });

  it('src/ has no import cycle (type-only imports aside)', () => {
    const srcFiles = [...imports.keys()].filter((file) => treeOf(file) === 'src');
    assert.deepEqual(
      cycles(imports, srcFiles).map((cycle) => cycle.join(' -> ')),
      [],
    );
  });

  it('no tool tree imports another (src <- harness <- test, bench, faults)', () => {
    assert.deepEqual(crossings(imports), []);
  });

  it('the bench and the fault runner never load node:test', () => {
    assert.deepEqual(loadsNodeTest(imports), []);
  });
});
