import t from 'tap';
import { readFileSync } from 'node:fs';
import { renderConfigReference } from '../docs/tools/render-config-reference.js';

t.test('docs/configuration.md shows the reference table rendered from the config schema', async (t) => {
  const page = readFileSync(new URL('../docs/configuration.md', import.meta.url), 'utf8');
  const match = /<!-- config-reference:start -->\n([\s\S]*?)\n<!-- config-reference:end -->/.exec(page);
  t.ok(match, 'the page has the reference markers');
  t.equal(match![1], renderConfigReference(), 'regenerate with: node --import tsx docs/tools/render-config-reference.ts');
});
