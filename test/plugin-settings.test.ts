import t from 'tap';
import { ConfigError, createGateway, type TollgatePlugin } from '../core/index.js';
import { settingsProblems, Tokens, validateSettings, validateSettingsLayers } from '../core/plugin-api.js';
import { health } from '../plugins/health/index.js';
import { accessLog, metrics } from '../plugins/metrics/index.js';
import { admin } from '../plugins/admin/index.js';
import { resolveAdminSettings } from '../plugins/admin/settings.js';
import { ledgerSqlite } from '../plugins/ledger-sqlite/index.js';
import { ledgerRedis } from '../plugins/ledger-redis/index.js';
import { solanaFamily } from '../plugins/solana/index.js';
import { readIpfsSettings } from '../plugins/ipfs/settings.js';

// Plugin settings go through core's validator: one JSON Schema per plugin, the configuration's own
// error format (`plugins.<name>.<field>: what is wrong`, every problem at once), defaults filled in.

const schema = {
  type: 'object',
  additionalProperties: false,
  properties: { path: { type: 'string', pattern: '^/', default: '/status' }, limit: { type: 'integer', minimum: 1 } },
} as const;

t.test('validateSettings merges sources in order, fills defaults and names every problem', async (t) => {
  t.same(validateSettings(schema, [{ limit: 2 }, undefined, { limit: 3, path: undefined }], 'plugins.status'), { limit: 3, path: '/status' });
  const error = t.throws(() => validateSettings(schema, [{ path: 'status', limit: 0, surprise: true }], 'plugins.status')) as ConfigError;
  t.type(error, ConfigError);
  t.same([...error.problems].sort(), [
    'plugins.status.limit: must be >= 1',
    'plugins.status.path: must match pattern "^/"',
    'plugins.status.surprise: is not a known field',
  ]);
});

async function refusal(plugin: TollgatePlugin, plugins: Record<string, Record<string, unknown>>): Promise<readonly string[]> {
  try {
    // The network's family exists, so that the settings are the only problems the gateway reports.
    const family: TollgatePlugin = { name: 'none-family', register: (container) => void container.register(Tokens.Family, { useValue: { name: 'none', methods: [] } }) };
    const gateway = await createGateway({ config: { networks: [{ name: 'none', families: ['none'], upstreams: [{ url: 'http://127.0.0.1:9' }] }], plugins }, plugins: [family, plugin] });
    await gateway.close();
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  throw new Error('the settings were accepted');
}

t.test('each plugin refuses unknown and bad settings in the configuration format', async (t) => {
  t.same(await refusal(health(), { health: { livenessPath: 'healthz', surprise: 1 } }), ['plugins.health.surprise: is not a known field', 'plugins.health.livenessPath: must match pattern "^/"']);
  t.same(await refusal(health(), { health: { timeoutMs: 0.5 } }), ['plugins.health.timeoutMs: must be integer', 'plugins.health.timeoutMs: must be >= 1']);
  t.same(await refusal(metrics(), { metrics: { token: 'short', defaultMetrics: 'yes' } }), ['plugins.metrics.token: must NOT have fewer than 16 characters', 'plugins.metrics.defaultMetrics: must be boolean']);
  t.same(await refusal(accessLog(), { 'access-log': { level: 'warn' } }), ['plugins.access-log.level: must be one of info, debug, trace']);
  t.same(await refusal(admin(), { admin: { prefix: '/admin/', maxBodyBytes: 10, tokn: 'x' } }), [
    'plugins.admin.tokn: is not a known field',
    'plugins.admin.prefix: must match pattern "^/[A-Za-z0-9._~/-]*[^/]$"',
    'plugins.admin.maxBodyBytes: must be >= 1024',
  ]);
  t.same(await refusal(solanaFamily(), { solana: { transports: ['http', ''], extra: 1 } }), ['plugins.solana.extra: is not a known field', 'plugins.solana.transports[1]: must NOT have fewer than 1 characters']);
  t.same(await refusal(ledgerSqlite(), { 'ledger-sqlite': { synchronous: 'off', retainDays: 0 } }), ['plugins.ledger-sqlite.synchronous: must be one of normal, full', 'plugins.ledger-sqlite.retainDays: must be >= 1']);
  t.same(await refusal(ledgerRedis(), { 'ledger-redis': { url: 'http://127.0.0.1:6379', usageFlush: 5 } }), ['plugins.ledger-redis.usageFlush: is not a known field', 'plugins.ledger-redis.url: must match pattern "^rediss?://"']);
});

t.test("a union is worded once: by the branch the value's type picks, else by what it may be", async (t) => {
  // An array: only the array branch can take it, so its own complaint is the one that helps.
  t.same(await refusal(solanaFamily(), { solana: { transports: ['http', ''] } }), ['plugins.solana.transports[1]: must NOT have fewer than 1 characters']);
  // A number: no branch takes it; the line says what would do.
  t.same(await refusal(solanaFamily(), { solana: { transports: 5 } }), ['plugins.solana.transports: must be "all" or an array']);
  // A string other than the constant: the constant's branch is the one for strings.
  t.same(await refusal(solanaFamily(), { solana: { transports: 'some' } }), ['plugins.solana.transports: must be "all"']);
  // Two branches take strings: one line for the union.
  t.same(await refusal(admin(), { admin: { dashboard: 'admin' } }), ['plugins.admin.dashboard: must match pattern "^/[A-Za-z0-9._~/-]*[^/]$"']);
  t.same(await refusal(admin(), { admin: { dashboard: 5 } }), ['plugins.admin.dashboard: must be a string or false']);
});

t.test('a schema words its own problems with the problem annotation; refine checks what a schema cannot', async (t) => {
  const worded = {
    type: 'object',
    additionalProperties: false,
    properties: {
      path: { type: 'string', pattern: '^/', problem: 'must be a path starting with /' },
      ids: { type: 'array', items: { type: 'string' }, problem: { type: 'must be a list of ids' } },
      mode: { anyOf: [{ const: 'fast' }, { type: 'integer' }], problem: 'must be "fast" or a number of workers' },
    },
  } as const;
  const error = t.throws(() => validateSettings(worded, [{ path: 'x', ids: 'a', mode: 'slow' }], 'plugins.demo')) as ConfigError;
  t.same(error.problems, ['plugins.demo.path: must be a path starting with /', 'plugins.demo.ids: must be a list of ids', 'plugins.demo.mode: must be "fast" or a number of workers']);
  const unique = (settings: { ids?: string[] }): string[] => (new Set(settings.ids).size === settings.ids?.length ? [] : ['ids: must not repeat an id']);
  t.same(settingsProblems(worded, { ids: ['a', 'a'] }, 'settings.demo', unique), ['settings.demo.ids: must not repeat an id'], 'refine words its problems under where');
  t.same(settingsProblems(worded, { ids: 'a' }, 'settings.demo', unique), ['settings.demo.ids: must be a list of ids'], 'refine runs only once the schema passed');
  t.same(settingsProblems(worded, { ids: ['a'] }, 'settings.demo', unique), [], 'fine');
  t.throws(() => validateSettings(worded, [{ ids: ['b', 'b'] }], 'plugins.demo', unique), new ConfigError(['plugins.demo.ids: must not repeat an id']));
});

t.test('layers are checked each on its own, every problem at once, then merged with defaults', async (t) => {
  t.same(validateSettingsLayers(schema, [['status()', { limit: 2 }], ['plugins.status', { limit: 3 }]]), { limit: 3, path: '/status' }, 'the later layer wins; defaults fill the rest');
  t.same(validateSettingsLayers(schema, [['status()', { path: '/mine' }], ['plugins.status', undefined]]), { path: '/mine' }, "a default never overrides an earlier layer's value");
  t.throws(() => validateSettingsLayers(schema, [['status()', { limit: 0 }], ['plugins.status', { path: 'x', extra: 1 }]]), new ConfigError([
    'status().limit: must be >= 1',
    'plugins.status.extra: is not a known field',
    'plugins.status.path: must match pattern "^/"',
  ]), 'each problem names its layer');
});

t.test('defaults and fallbacks still apply', async (t) => {
  t.same(resolveAdminSettings([{ dashboard: false }], { TOLLGATE_ADMIN_TOKEN: 'an-admin-token-0123' }), { prefix: '/admin/v1', token: 'an-admin-token-0123', maxBodyBytes: 65_536, dashboard: false });
  t.same(resolveAdminSettings([{ token: 'configured-token-0123' }], { TOLLGATE_ADMIN_TOKEN: 'an-admin-token-0123' }).token, 'configured-token-0123', 'the config wins over the environment');
  const fromEnv = t.throws(() => resolveAdminSettings([], { TOLLGATE_ADMIN_TOKEN: 'short' })) as ConfigError;
  t.same(fromEnv.problems, ['plugins.admin.token: must NOT have fewer than 16 characters'], 'a token from the environment is checked as a configured one');
});

t.test('the ipfs plugin checks each layer of its settings', async (t) => {
  t.same(readIpfsSettings('plugins.ipfs', { plans: { core: false, growth: { readsPerSecond: 10, writesPerSecond: 2, readBurst: 20 } }, realm: 'files' }), { plans: { core: false, growth: { readsPerSecond: 10, writesPerSecond: 2, readBurst: 20 } }, realm: 'files' });
  const error = t.throws(() => readIpfsSettings('plugins.ipfs', { plans: { growth: { readsPerSecond: 0, writesPerSecond: 2, burst: 1 } }, realm: 'say "hi"', addTimeoutMs: 0 })) as ConfigError;
  t.ok(error.problems.includes('plugins.ipfs.plans.growth.burst: is not a known field'));
  t.ok(error.problems.includes('plugins.ipfs.plans.growth.readsPerSecond: must be > 0'));
  t.ok(error.problems.includes('plugins.ipfs.addTimeoutMs: must be >= 1'));
  t.ok(error.problems.some((line) => line.startsWith('plugins.ipfs.realm: must match pattern')), 'a realm with a quote is refused');
  t.same(readIpfsSettings('ipfs()', {}), {});
  // Prices are by command name, and only the commands the API has can be priced.
  t.same(readIpfsSettings('plugins.ipfs', { credits: { cat: 5, 'dag/import': 100 }, maxUploadBytes: 4096 }), { credits: { cat: 5, 'dag/import': 100 }, maxUploadBytes: 4096 });
  const prices = t.throws(() => readIpfsSettings('plugins.ipfs', { credits: { 'pin/nope': 5, cat: -1 }, maxUploadBytes: 10 })) as ConfigError;
  t.ok(prices.problems.some((line) => line.startsWith('plugins.ipfs.credits')), 'an unknown command or a negative price is refused');
  t.ok(prices.problems.includes('plugins.ipfs.maxUploadBytes: must be >= 1024'));
});
