/**
 * The Promela models in model/ (docs/model.md) name each source they follow and its SHA-256. A
 * source changed without its model being looked at again and re-stamped fails here, naming the
 * model and the source: model and code cannot drift apart silently. Needs no spin.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { checkStamps, models, stampsOf } from '../scripts/model-stamps.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const read = (path: string): string => readFileSync(join(root, path), 'utf8');

describe('model stamps', () => {
  it('every model follows the sources as they are (re-stamp: npm run model -- --stamp)', () => {
    assert.ok(models(root).length > 0, 'no model in model/');
    const stale = checkStamps(root).map(({ model, source, reason }) => `${model}: ${source} ${reason}`);
    assert.deepEqual(stale, [], `re-check the models against these sources, then re-stamp:\n${stale.join('\n')}`);
  });

  it('a changed script fails the check, naming the model and the script', () => {
    const model = models(root).find((file) => stampsOf(read(file)).some(({ path }) => path.endsWith('.lua')));
    assert.ok(model, 'no model follows a Lua script');
    const script = stampsOf(read(model)).find(({ path }) => path.endsWith('.lua'))!.path;
    const changed = (path: string): string => (path === script ? `${read(path)}-- one more line\n` : read(path));
    const stale = checkStamps(root, changed);
    assert.deepEqual(stale, [{ model, source: script, reason: 'changed since the model was stamped' }]);
  });

  it('a model that names no source, or a source that is gone, fails the check', () => {
    const model = models(root)[0]!;
    const unstamped = (path: string): string => (path === model ? '/* no stamp */\n' : read(path));
    assert.deepEqual(
      checkStamps(root, unstamped).filter((stale) => stale.model === model),
      [{ model, source: '-', reason: 'names no source it follows' }],
    );
    const source = stampsOf(read(model))[0]!.path;
    const gone = (path: string): string => {
      if (path === source) throw new Error('ENOENT');
      return read(path);
    };
    assert.deepEqual(
      checkStamps(root, gone).filter((stale) => stale.model === model),
      [{ model, source, reason: 'follows a file that does not exist' }],
    );
  });
});
