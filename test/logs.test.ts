import t from 'tap';
import { request } from 'undici';
import { createGateway } from '../core/index.js';
import { keyIdOf } from '../core/plugin-api.js';
import { httpTransport } from '../plugins/http/index.js';
import { evmFamily } from '../plugins/evm/index.js';
import { ledgerSqlite } from '../plugins/ledger-sqlite/index.js';
import { admin } from '../plugins/admin/index.js';
import { accessLog, gatewayLogger, metrics } from '../plugins/metrics/index.js';
import { post, rpc } from './helpers/json-rpc.js';
import { closedPort } from './helpers/closed-port.js';
import { startTinyUpstream } from './helpers/tiny-upstream.js';


const GOOD_KEY = 'logs-good-key-000000001';
const GOOD_SECRET = 'logs-good-secret-000000001';
const ADMIN_TOKEN = 'logs-admin-token-0123456789abcdef';
const PARTNER_PATH_CREDENTIAL = 'partner-path-credential-42';
const PARTNER_HEADER_CREDENTIAL = 'partner-header-credential-42';

t.test('a log capture over a run with good and bad keys contains no key, secret or credential', async (t) => {
  const upstream = await startTinyUpstream();
  t.teardown(() => upstream.close());
  const dead = await closedPort();
  const lines: string[] = [];
  const logger = gatewayLogger('trace', { write: (line: string) => void lines.push(line) });
  const gateway = await createGateway({
    config: {
      server: { host: '127.0.0.1', port: 0 },
      keys: [{ key: GOOD_KEY, id: 'good', plan: 'growth', secret: GOOD_SECRET }],
      networks: [
        { name: 'eth', families: ['evm'], upstreams: [{ url: upstream.url }] },
        {
          name: 'broken',
          families: ['evm'],
          upstreams: [{ url: `http://127.0.0.1:${dead}/v1/${PARTNER_PATH_CREDENTIAL}`, headers: { authorization: `Bearer ${PARTNER_HEADER_CREDENTIAL}` } }],
        },
      ],
      plugins: { admin: { token: ADMIN_TOKEN } },
    },
    plugins: [ledgerSqlite({ path: ':memory:' }), admin(), metrics(), accessLog({ level: 'debug' }), httpTransport(), evmFamily()],
    logger,
  });
  t.teardown(() => gateway.close());
  const server = await gateway.listen(0, '127.0.0.1');
  const origin = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  const url = (network: string, key: string): string => `${origin}/${network}/v3/${key}`;
  const adminCall = async (method: string, path: string, token: string, body?: unknown): Promise<Record<string, string>> => {
    const res = await request(`${origin}/admin/v1${path}`, {
      method: method as 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return (await res.body.json()) as Record<string, string>;
  };

  const secrets = [GOOD_KEY, GOOD_SECRET, ADMIN_TOKEN, PARTNER_PATH_CREDENTIAL, PARTNER_HEADER_CREDENTIAL];
  // Good keys: a config key and managed keys, issued, rotated and revoked through the admin API.
  t.equal((await post(url('eth', GOOD_KEY), rpc('eth_blockNumber', []))).status, 200);
  const issued = await adminCall('POST', '/keys', ADMIN_TOKEN, { plan: 'core', id: 'managed' });
  secrets.push(issued.apiKey!, issued.secret!);
  t.equal((await post(url('eth', issued.apiKey!), rpc('eth_blockNumber', []))).status, 200);
  const rotated = await adminCall('POST', '/keys/managed/rotate', ADMIN_TOKEN);
  secrets.push(rotated.apiKey!, rotated.secret!);
  t.equal((await post(url('eth', issued.apiKey!), rpc('eth_blockNumber', []))).status, 401, 'the rotated-out key is a bad key now');
  t.equal((await post(url('eth', rotated.apiKey!), rpc('eth_chainId', []))).status, 200);
  await adminCall('POST', '/keys/managed/revoke', ADMIN_TOKEN);
  t.equal((await post(url('eth', rotated.apiKey!), rpc('eth_blockNumber', []))).status, 401, 'and so is the revoked one');
  // Bad keys and bad requests of every kind.
  const unknown = 'logs-unknown-key-0000000042';
  secrets.push(unknown);
  t.equal((await post(url('eth', unknown), rpc('eth_blockNumber', []))).status, 401);
  t.equal((await post(url('eth', unknown), [rpc('eth_blockNumber', [], 1), rpc('eth_chainId', [], 2)])).status, 401);
  t.equal((await post(url('eth', GOOD_KEY), '{"jsonrpc":"2.0","id":1,"method":')).status, 400);
  await post(url('eth', GOOD_KEY), rpc('eth_getBlockByNumber', ['not-a-block', false]));
  await post(url('eth', GOOD_KEY), rpc('no_such_method', []));
  t.equal((await post(url('broken', GOOD_KEY), rpc('eth_blockNumber', []))).status, 503, 'an upstream holding credentials fails');
  const wrongAdmin = 'logs-wrong-admin-token-0000000';
  secrets.push(wrongAdmin);
  await adminCall('GET', '/keys', wrongAdmin);
  await adminCall('GET', '/keys', GOOD_KEY);
  await request(`${origin}/metrics`).then((res) => res.body.text());
  await gateway.close();

  const log = lines.join('');
  t.ok(lines.length >= 10, `${lines.length} lines captured`);
  for (const secret of secrets) t.notOk(log.includes(secret), `the log never contains ${secret.slice(0, 8)}…`);
  const access = lines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((entry) => entry.log === 'access');
  t.ok(access.some((e) => e.key === 'good' && e.status === 200 && e.credits === 80), 'good calls are logged by key id');
  t.ok(access.some((e) => e.key === 'managed' && e.status === 200), 'managed keys too');
  t.ok(access.some((e) => e.key === keyIdOf(unknown) && e.status === 401), 'an unknown key by a hash prefix');
  t.ok(access.some((e) => e.network === 'broken' && e.status === 503 && e.error === 'UPSTREAM_UNAVAILABLE' && e.credits === 0), 'failed calls with their error');
  t.ok(lines.some((line) => line.includes('upstream attempt failed')), 'the upstream failure itself was logged');
});
