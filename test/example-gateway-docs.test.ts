import t from 'tap';
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { loadConfigFile } from '../core/index.js';
import { renderConfigReference } from '../docs/tools/render-config-reference.js';
import { CLI_FLAGS } from '../examples/gateway/cli.js';
import { HELP } from '../examples/gateway/help.js';
import { bundledPlugins } from '../examples/gateway/bundled-plugins.js';
import { defaultConfig } from '../examples/gateway/default-config.js';

// The bundled gateway's README must cover every flag, environment variable and config field; these
// checks fail when one is added to the code and not to the page.
const readme = readFileSync(new URL('../examples/gateway/README.md', import.meta.url), 'utf8');
const examplePath = new URL('../examples/gateway/gateway.example.yaml', import.meta.url).pathname;

/** Field paths of the reference table, e.g. `networks[].upstreams[].url`, `plans.<name>.failover`. */
function schemaPaths(): string[] {
  return renderConfigReference().split('\n').slice(2).map((row) => /^\| `([^`]+)`/.exec(row)![1]!);
}

/** Field paths a parsed config sets, in the table's notation (array items as `[]`, map keys as `<name>`). */
function pathsOf(value: unknown, path: string, maps: ReadonlySet<string>, out: Set<string>): void {
  if (path !== '') out.add(path);
  if (Array.isArray(value)) {
    for (const item of value) pathsOf(item, `${path}[]`, maps, out);
    return;
  }
  if (typeof value !== 'object' || value === null) return;
  for (const [name, child] of Object.entries(value)) {
    const segment = maps.has(path) ? '<name>' : name;
    pathsOf(child, path === '' ? segment : `${path}.${segment}`, maps, out);
  }
}

t.test('the README shows the configuration reference rendered from the schema', async (t) => {
  const match = /<!-- config-reference:start -->\n([\s\S]*?)\n<!-- config-reference:end -->/.exec(readme);
  t.ok(match, 'the README has the reference markers');
  t.equal(match?.[1], renderConfigReference(), 'regenerate with: node --import tsx docs/tools/render-config-reference.ts');
});

t.test('gateway.example.yaml is a valid configuration that sets every field', async (t) => {
  const config = await loadConfigFile(examplePath);
  t.equal(config.networks.length, 2);
  const fields = schemaPaths();
  // Free-form maps: their keys are names, not fields.
  const maps = new Set(['plans', 'plugins', 'networks[].upstreams[].headers', 'networks[].options', 'keys[].settings']);
  const set = new Set<string>();
  pathsOf(parse(readFileSync(examplePath, 'utf8')), '', maps, set);
  const missing = fields.filter((field) => !set.has(field));
  t.same(missing, [], 'every field of the schema is set in the example');
  t.ok(readme.includes('gateway.example.yaml'), 'the README points to the example');
});

t.test('every plugin of the bundled gateway has its settings section in the README', async (t) => {
  const names = new Set<string>();
  for (const plugin of await bundledPlugins(defaultConfig)) names.add(plugin.name);
  for (const plugin of await bundledPlugins({ ...defaultConfig, plugins: { 'ledger-redis': { url: 'redis://127.0.0.1:6379' } } })) names.add(plugin.name);
  for (const plugin of await bundledPlugins({ ...defaultConfig, plugins: { cache: {}, 'cache-redis': { url: 'redis://127.0.0.1:6379' } } })) names.add(plugin.name);
  t.ok(names.has('ledger-sqlite') && names.has('ledger-redis') && names.has('admin'), 'both stores and the operator plugins are counted');
  t.ok(names.has('cache') && names.has('cache-redis'), 'the cache and its Redis store are counted');
  for (const name of names) t.match(readme, `| \`plugins.${name}\` |`, `plugins.${name}`);
});

t.test('--help and the README list every flag and environment variable', async (t) => {
  for (const [name, flag] of Object.entries(CLI_FLAGS)) {
    t.match(HELP, new RegExp(`--${name}\\b`), `--help lists --${name}`);
    t.match(readme, new RegExp(`\`(-\\w, )?--${name}\\b`), `the README lists --${name}`);
    if ('short' in flag) {
      t.match(HELP, `-${flag.short}, --${name}`, `--help lists -${flag.short}`);
      t.match(readme, `-${flag.short}, --${name}`, `the README lists -${flag.short}`);
    }
  }
  const variables = HELP.slice(HELP.indexOf('Environment:')).match(/^ {2}([A-Z_]+)\s/gm)?.map((line) => line.trim()) ?? [];
  t.ok(variables.length >= 5, 'the help names its environment variables');
  for (const variable of variables) t.match(readme, `| \`${variable}\` |`, `the README explains ${variable}`);
});
