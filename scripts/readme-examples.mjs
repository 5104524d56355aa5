// Copies each example file into README.md where the README quotes it (a ```ts block after
// `<!-- example: examples/<file>.ts -->`). Run by hand after changing an example:
// `node scripts/readme-examples.mjs`. test/examples.test.ts fails while a quote differs from its file.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const SNIPPET = /<!-- example: (examples\/[\w.-]+\.ts) -->\n```ts\n([\s\S]*?)```\n/g;

const readme = readFileSync(`${root}README.md`, 'utf8');
let copied = 0;
const updated = readme.replace(SNIPPET, (_, file) => {
  copied++;
  return `<!-- example: ${file} -->\n\`\`\`ts\n${readFileSync(`${root}${file}`, 'utf8')}\`\`\`\n`;
});
if (updated !== readme) writeFileSync(`${root}README.md`, updated);
console.log(`${copied} examples quoted; README.md ${updated === readme ? 'unchanged' : 'updated'}`);
