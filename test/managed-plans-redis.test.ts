/**
 * Managed plans and the usage export on Redis, with two gateway processes sharing it: a plan created or
 * changed through one gateway's admin API applies to the other's next calls without a restart, and the
 * export of every key matches the calls made through both.
 */
import t from 'tap';
import { adminRequest, type AdminAnswer } from './helpers/admin-request.js';
import { PassThrough } from 'node:stream';
import { resolveConfig, type GatewayConfigInput } from '../core/index.js';
import { createRedisStore } from '../plugins/ledger-redis/index.js';
import { parseCli } from '../examples/gateway/cli.js';
import { runCommand } from '../examples/gateway/store-commands.js';
import { startTinyUpstream } from './helpers/tiny-upstream.js';
import { startGatewayProcess, type GatewayProcess } from './helpers/gateway-process.js';
import { redisAvailable, startRedisServer } from './helpers/redis-server.js';
import { post, rpc } from './helpers/json-rpc.js';
import { until } from './helpers/until.js';

if (!(await redisAvailable())) {
  t.fail('redis-server is not installed (apt-get install redis-server)');
  process.exit(1);
}

const TOKEN = 'admin-token-for-redis-plan-tests-0123';
const CONFIG_KEY = 'redis-plans-config-key-0001';
const PREFIX = 'plans:';
const redis = await startRedisServer();
t.teardown(() => redis.stop());
const upstream = await startTinyUpstream();
t.teardown(() => upstream.close());
const input: GatewayConfigInput = {
  keys: [{ key: CONFIG_KEY, id: 'from-config', plan: 'core' }],
  networks: [
    { name: 'eth', families: ['evm'], upstreams: [{ url: upstream.url }] },
    { name: 'polygon', families: ['evm'], upstreams: [{ url: upstream.url }] },
  ],
  plugins: { admin: { token: TOKEN }, 'ledger-redis': { url: redis.url, prefix: PREFIX, usageFlushMs: 50 } },
};
const gateways: GatewayProcess[] = await Promise.all([startGatewayProcess({ store: 'redis', admin: true, config: input }), startGatewayProcess({ store: 'redis', admin: true, config: input })]);
t.teardown(() => Promise.all(gateways.map((g) => g.stop())));
const [a, b] = gateways as [GatewayProcess, GatewayProcess];

function admin(gateway: GatewayProcess, method: string, route: string, body?: unknown): Promise<AdminAnswer> {
  return adminRequest(`${gateway.origin}/admin/v1${route}`, TOKEN, method, body);
}

const url = (gateway: GatewayProcess, network: string, apiKey: string): string => `${gateway.origin}/${network}/v3/${apiKey}`;
const status = async (gateway: GatewayProcess, apiKey: string): Promise<number> => (await post(url(gateway, 'eth', apiKey), rpc('eth_chainId', []))).status;

t.test('a plan made and changed through one gateway applies to the other\'s next calls', async (t) => {
  t.equal((await admin(a, 'POST', '/plans', { name: 'gold', dailyCredits: 1_000_000, creditsPerSecond: 10_000 })).status, 201);
  const key = await admin(a, 'POST', '/keys', { plan: 'gold', id: 'golden' });
  t.equal(key.status, 201, key.text);
  const apiKey = key.body.apiKey as string;
  await until('the other gateway serves the key on the new plan', async () => (await status(b, apiKey)) === 200);
  t.match((await admin(b, 'GET', '/plans')).body, { plans: { gold: { dailyCredits: 1_000_000, source: 'store' }, core: { source: 'config' } } }, 'both list it');

  t.equal((await admin(a, 'PATCH', '/plans/gold', { dailyCredits: 0 })).status, 200);
  await until('the other gateway applies the change without a restart', async () => (await status(b, apiKey)) === 402);
  t.equal(await status(a, apiKey), 402, 'and so does the one that made it');
  t.equal((await admin(b, 'PATCH', '/plans/gold', { dailyCredits: 1_000_000 })).status, 200);
  await until('the first gateway applies a change made through the second', async () => (await status(a, apiKey)) === 200);

  t.equal((await admin(b, 'POST', '/plans', { name: 'core', dailyCredits: 1, creditsPerSecond: 1 })).status, 409, 'a config plan\'s name cannot be managed');
  const inUse = await admin(b, 'DELETE', '/plans/gold');
  t.equal(inUse.status, 409, 'a plan a key is on cannot be deleted');
  t.match(inUse.body, { error: { message: /is the plan of key golden/ } });
  t.equal((await admin(a, 'PATCH', '/keys/golden', { plan: 'growth' })).status, 200);
  t.equal((await admin(b, 'DELETE', '/plans/gold')).status, 200);
  t.equal((await admin(a, 'GET', '/plans/gold')).status, 404, 'deleted for both');
});

t.test('plans through the CLI on Redis reach running gateways', async (t) => {
  const config = resolveConfig(input);
  let out = '';
  let err = '';
  const cli = (args: string[]): Promise<number> => runCommand(parseCli(args), config, { out: (s) => void (out += s), err: (s) => void (err += s) });
  t.equal(await cli(['plans', 'create', 'bronze', '--daily-credits', '0', '--credits-per-second', '100']), 0, err);
  t.equal(await cli(['keys', 'create', '--plan', 'bronze', '--id', 'bronze-key', '--json']), 0, err);
  const apiKey = (JSON.parse(out.slice(out.indexOf('{'))) as { apiKey: string }).apiKey;
  await until('a gateway knows the plan the CLI made', async () => (await status(a, apiKey)) === 402);
  t.equal(await cli(['plans', 'update', 'bronze', '--daily-credits', '1000']), 0, err);
  await until('both apply the CLI\'s change', async () => (await status(a, apiKey)) === 200 && (await status(b, apiKey)) === 200);
});

t.test('the usage export of every key matches the calls made through both gateways', async (t) => {
  const made = await admin(a, 'POST', '/keys', { plan: 'growth', id: 'exported' });
  const apiKey = made.body.apiKey as string;
  const calls: Array<[GatewayProcess, string, string, string]> = [
    [a, 'eth', CONFIG_KEY, 'eth_blockNumber'],
    [b, 'eth', CONFIG_KEY, 'eth_blockNumber'],
    [b, 'polygon', CONFIG_KEY, 'eth_blockNumber'],
    [a, 'eth', apiKey, 'eth_chainId'],
    [a, 'polygon', apiKey, 'eth_chainId'],
    [b, 'polygon', apiKey, 'eth_chainId'],
  ];
  for (const [gateway, network, key, method] of calls) t.equal((await post(url(gateway, network, key), rpc(method, []))).status, 200);

  // A day written by an earlier version (by method only) is exported too, as network ''.
  const store = createRedisStore({ url: redis.url, prefix: PREFIX });
  await store.open();
  t.teardown(() => store.close());
  await store.connection.client.tgUsage(`${PREFIX}use:2026-01-05:{from-config}`, `${PREFIX}once:{from-config}:legacy-1`, 86_400_000, 60_000, 'eth_call', 4, 320, 100, 1, 0, 0);

  const today = new Date().toISOString().slice(0, 10);
  type Row = { day: string; keyId: string; network: string; method: string; calls: number; credits: number; failed: number };
  const expected = [
    { keyId: 'from-config', network: 'eth', method: 'eth_blockNumber', calls: 2, credits: 160, failed: 0 },
    { keyId: 'from-config', network: 'polygon', method: 'eth_blockNumber', calls: 1, credits: 80, failed: 0 },
    { keyId: 'exported', network: 'eth', method: 'eth_chainId', calls: 1, failed: 0 },
    { keyId: 'exported', network: 'polygon', method: 'eth_chainId', calls: 2, failed: 0 },
  ];
  let rows: Row[] = [];
  await until('both gateways wrote their usage', async () => {
    rows = ((await admin(b, 'GET', `/usage/export?from=${today}&format=json`)).body as { rows: Row[] }).rows.filter((r) => r.keyId === 'from-config' || r.keyId === 'exported');
    return rows.length === expected.length && expected.every((e) => rows.some((r) => r.keyId === e.keyId && r.network === e.network && r.method === e.method && r.calls === e.calls));
  });
  for (const e of expected) t.match(rows.find((r) => r.keyId === e.keyId && r.network === e.network && r.method === e.method), { day: today, ...e });

  const legacy = await admin(a, 'GET', '/usage/export?from=2026-01-05&format=json');
  t.same((legacy.body as { rows: Row[] }).rows, [{ day: '2026-01-05', keyId: 'from-config', network: '', method: 'eth_call', calls: 4, credits: 320, bytes: 100, failed: 1 }]);
  const csv = await admin(a, 'GET', '/usage/export?from=2026-01-04&to=2026-01-06');
  t.equal(csv.text, 'day,key_id,network,method,calls,credits,bytes,failed\r\n2026-01-05,from-config,,eth_call,4,320,100,1\r\n');

  let stdout = '';
  const stream = new PassThrough();
  stream.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  const code = await runCommand(parseCli(['usage', 'export', '--from', today, '--format', 'json']), resolveConfig(input), { out: (s) => void (stdout += s), err: () => undefined, stream });
  t.equal(code, 0);
  t.same(JSON.parse(stdout), (await admin(a, 'GET', `/usage/export?from=${today}&format=json`)).body, 'the CLI exports what the admin API does');
});
