/**
 * Environment references in configuration files: `${VAR}` and `${VAR:-default}` are replaced in values,
 * `$${` stays a literal `${`, an unset variable without a default (or a `${...}` that is no reference,
 * such as a placeholder copied from an example) is an error naming the field and the variable, and
 * `config check` masks every value taken from the environment.
 */
import t from 'tap';
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfigFile } from '../core/index.js';
import { interpolateEnv } from '../core/plugin-api.js';
import { TSX_NODE_ARGS } from './helpers/tsx-node-args.js';
import { resolveRedisSettings } from '../plugins/ledger-redis/settings.js';
import { maskFields } from '../examples/gateway/mask-secrets.js';

const dir = await mkdtemp(join(tmpdir(), 'tollgate-config-env-'));
t.teardown(() => rm(dir, { recursive: true, force: true }));

const file = join(dir, 'gateway.yaml');
await writeFile(file, [
  'networks:',
  '  - name: eth',
  '    families: [evm]',
  '    upstreams:',
  '      - url: ${NODE_URL:-http://127.0.0.1:8545}',
  '        headers: { authorization: "Bearer ${NODE_TOKEN}", x-note: "costs $${PRICE}" }',
  'plugins:',
  '  admin:',
  '    token: ${MY_ADMIN_TOKEN}',
  '',
].join('\n'));

t.test('references are replaced by the variables, or their defaults', async (t) => {
  const env = { MY_ADMIN_TOKEN: 'an-admin-token-of-some-length', NODE_TOKEN: 'node: #token' };
  const config = await loadConfigFile(file, env);
  t.equal(config.plugins.admin!.token, 'an-admin-token-of-some-length', 'not the 17-character literal');
  t.equal(config.networks[0]!.upstreams[0]!.url, 'http://127.0.0.1:8545', 'the default of an unset variable');
  t.same(config.networks[0]!.upstreams[0]!.headers, { authorization: 'Bearer node: #token', 'x-note': 'costs ${PRICE}' }, 'inside a string, a value never changing the structure; $${ is a literal ${');
  const withUrl = await loadConfigFile(file, { ...env, NODE_URL: 'http://10.0.0.2:8545' });
  t.equal(withUrl.networks[0]!.upstreams[0]!.url, 'http://10.0.0.2:8545');
  const emptyUrl = await loadConfigFile(file, { ...env, NODE_URL: '' });
  t.equal(emptyUrl.networks[0]!.upstreams[0]!.url, 'http://127.0.0.1:8545', ':- also covers an empty variable');
});

t.test('an unset variable, or a placeholder that is no reference, is an error naming the field', async (t) => {
  const error = await loadConfigFile(file, {}).then(() => undefined, (e: unknown) => e);
  t.type(error, ConfigError);
  t.same((error as ConfigError).problems, [
    'networks[0].upstreams[0].headers.authorization: ${NODE_TOKEN} is not set (give it a default with ${NODE_TOKEN:-default})',
    'plugins.admin.token: ${MY_ADMIN_TOKEN} is not set (give it a default with ${MY_ADMIN_TOKEN:-default})',
  ], 'every unset variable at once');
  const placeholder = interpolateEnv({ plugins: { admin: { token: '${a long random string}' } } }, {});
  t.same(placeholder.problems, ['plugins.admin.token: "${a long random string}" is not an environment variable reference (${NAME} or ${NAME:-default}; "$${" for a literal "${")']);
  t.same(interpolateEnv({ a: ['x ${OPEN'] }, {}).problems, ['a[0]: "${" is not closed by "}" (write "$${" for a literal "${")']);
  t.same(interpolateEnv({ a: 'no references', n: 5 }, {}), { value: { a: 'no references', n: 5 }, fields: [], referenced: [], problems: [] });
});

t.test('a reference where the gateway\'s schema wants a number or a boolean gives one', async (t) => {
  const typedFile = join(dir, 'typed.yaml');
  await writeFile(typedFile, [
    'server:',
    '  port: ${PORT}',
    '  maxBatchSize: "${BATCH:-50}"',
    '  servedByHeader: ${SERVED_BY}',
    '  host: "${HOST}"',
    'networks:',
    '  - name: eth',
    '    families: [evm]',
    '    upstreams:',
    '      - url: "http://127.0.0.1:8545"',
    '        weight: ${WEIGHT}',
    '        timeoutMs: ${TIMEOUT_MS:-1500}',
    'plugins:',
    '  ledger-redis:',
    '    url: "redis://127.0.0.1:${REDIS_PORT}"',
    '    usageFlushMs: ${FLUSH_MS}',
    '    prefix: "${PREFIX}"',
    '',
  ].join('\n'));
  const env = { PORT: '8600', SERVED_BY: 'false', HOST: '10', WEIGHT: '2.5', REDIS_PORT: '6390', FLUSH_MS: '250', PREFIX: '42' };
  const config = await loadConfigFile(typedFile, env);
  t.equal(config.server.port, 8600, 'an integer field');
  t.equal(config.server.maxBatchSize, 50, 'from a default too');
  t.equal(config.server.servedByHeader, false, 'a boolean field');
  t.equal(config.server.host, '10', 'a string field keeps a string that spells a number');
  t.equal(config.networks[0]!.upstreams[0]!.weight, 2.5, 'a number field');
  t.equal(config.networks[0]!.upstreams[0]!.timeoutMs, 1500);
  t.equal(config.plugins['ledger-redis']!.usageFlushMs, '250', 'a plugin\'s section stays as written: its plugin checks it, without the file');
  t.throws(() => resolveRedisSettings([config.plugins['ledger-redis']]), { message: /\n {2}plugins\.ledger-redis\.usageFlushMs: must be integer$/ }, 'and names the field');

  const shown = maskFields(config, ['server.port', 'server.servedByHeader', 'server.host']) as { server: Record<string, unknown> };
  t.same([shown.server.port, shown.server.servedByHeader, shown.server.host], ['****', '****', '****'], 'config check masks typed values from the environment too');

  const wrong = await loadConfigFile(typedFile, { ...env, PORT: '80.5', FLUSH_MS: 'soon' }).then(() => undefined, (e: unknown) => e);
  t.type(wrong, ConfigError);
  t.match((wrong as ConfigError).problems, ['server.port: must be integer'], 'what spells no integer is named as before');
  const written = join(dir, 'quoted.yaml');
  await writeFile(written, 'server: { port: "8600" }\nnetworks:\n  - { name: eth, families: [evm], upstreams: [{ url: "http://127.0.0.1:8545" }] }\n');
  await t.rejects(loadConfigFile(written, {}), { message: /\n {2}server\.port: must be integer$/ }, 'a number written in quotes in the file stays a mistake');
});

t.test('config check masks the values taken from the environment', async (t) => {
  const env = { ...process.env, MY_ADMIN_TOKEN: 'an-admin-token-of-some-length', NODE_TOKEN: 'node-token-9876543210', NODE_URL: 'http://user:pw@10.9.8.7:8545', TOLLGATE_CONFIG: file };
  const child = spawn(process.execPath, [...TSX_NODE_ARGS, new URL('../examples/gateway/main.ts', import.meta.url).pathname, 'config', 'check'], { stdio: ['ignore', 'pipe', 'pipe'], env });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c));
  child.stderr.on('data', (c: Buffer) => (stderr += c));
  const code = await new Promise((resolve) => child.on('exit', resolve));
  t.equal(code, 0, stderr);
  t.match(stdout, `# ${file}: valid`, 'TOLLGATE_CONFIG names the file');
  for (const secret of ['an-admin-token-of-some-length', 'node-token-9876543210', '10.9.8.7']) t.notMatch(stdout, secret, `${secret} is masked`);
  t.match(stdout, 'costs ${PRICE}', 'a value without a variable is shown');
});
