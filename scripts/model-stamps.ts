// The stamps of the Promela models in model/: each model names, in a header line per file, the
// sources it follows and the SHA-256 of each ("follows <path> sha256:<hex>"). A source changed
// since its model was last stamped means the model may no longer say what the code does: it must
// be looked at again and re-stamped (`npm run model -- --stamp`). test/model-stamps.test.ts checks
// the stamps in `npm test`, without spin.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** One "follows" line of a model. */
export interface Stamp {
  readonly path: string;
  readonly sha256: string;
}

/** A model whose stamp no longer matches a source it follows. */
export interface StaleStamp {
  readonly model: string;
  readonly source: string;
  readonly reason: string;
}

const FOLLOWS = /^ \* follows (\S+) sha256:([0-9a-f]+)$/gm;

export const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

/** The "follows" lines of a model's text. */
export function stampsOf(model: string): Stamp[] {
  return [...model.matchAll(FOLLOWS)].map((match) => ({ path: match[1]!, sha256: match[2]! }));
}

/** The models, as paths relative to the repository root. */
export function models(root: string): string[] {
  return readdirSync(join(root, 'model'))
    .filter((file) => file.endsWith('.pml'))
    .sort()
    .map((file) => `model/${file}`);
}

/**
 * What is stale: every model with no stamp at all, and every source whose hash differs from its
 * model's stamp. `read` reads a file by its path relative to the root (a test passes a changed one).
 */
export function checkStamps(
  root: string,
  read: (path: string) => string = (path) => readFileSync(join(root, path), 'utf8'),
): StaleStamp[] {
  const stale: StaleStamp[] = [];
  for (const model of models(root)) {
    const stamps = stampsOf(read(model));
    if (stamps.length === 0) stale.push({ model, source: '-', reason: 'names no source it follows' });
    for (const { path, sha256: stamped } of stamps) {
      let text: string;
      try {
        text = read(path);
      } catch {
        stale.push({ model, source: path, reason: 'follows a file that does not exist' });
        continue;
      }
      if (sha256(text) !== stamped) {
        stale.push({ model, source: path, reason: 'changed since the model was stamped' });
      }
    }
  }
  return stale;
}

/** Rewrites every model's stamps from the sources as they are now; returns the models changed. */
export function restamp(root: string): string[] {
  const changed: string[] = [];
  for (const model of models(root)) {
    const file = join(root, model);
    const before = readFileSync(file, 'utf8');
    const after = before.replace(
      FOLLOWS,
      (_, path: string) => ` * follows ${path} sha256:${sha256(readFileSync(join(root, path), 'utf8'))}`,
    );
    if (after !== before) {
      writeFileSync(file, after);
      changed.push(model);
    }
  }
  return changed;
}
