import t from 'tap';
import { request } from 'undici';
import { httpTransport } from '../plugins/http/index.js';
import { evmFamily } from '../plugins/evm/index.js';
import { metrics } from '../plugins/metrics/index.js';
import { startTestGateway } from './helpers/gateway.js';
import { post, rpc } from './helpers/json-rpc.js';
import { startTinyUpstream } from './helpers/tiny-upstream.js';

const upstream = await startTinyUpstream();
t.teardown(() => upstream.close());

async function scrape(url: string, headers: Record<string, string> = {}): Promise<{ status: number; type: string; text: string }> {
  const res = await request(url, { headers });
  return { status: res.statusCode, type: String(res.headers['content-type']), text: await res.body.text() };
}

/** The value of one sample line, e.g. `tollgate_calls_total{network="eth",method="x",status="ok"}`. */
function sample(text: string, name: string, labels: Record<string, string>): number | undefined {
  const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    const inside = line.slice(name.length + 1, line.indexOf('}'));
    const parts = inside.split(',');
    if (parts.length === wanted.length && wanted.every((w) => parts.includes(w))) return Number(line.slice(line.indexOf('}') + 1));
  }
  return undefined;
}

t.test('calls, credits, errors and latency by network, method and status; upstreams at scrape time', async (t) => {
  const gw = await startTestGateway(
    {
      plans: { tiny: { dailyCredits: 160, creditsPerSecond: 1e6, failover: false } },
      keys: [
        { key: 'metrics-good-key-0001', id: 'good', plan: 'growth' },
        { key: 'metrics-tiny-key-0001', id: 'tiny', plan: 'tiny' },
      ],
      networks: [{ name: 'eth', families: ['evm'], upstreams: [{ name: 'tiny-node', url: upstream.url }] }],
    },
    [metrics({ defaultMetrics: false }), httpTransport(), evmFamily()],
  );
  t.teardown(() => gw.close());
  for (let i = 0; i < 3; i++) t.equal((await post(gw.url('eth', 'metrics-good-key-0001'), rpc('eth_blockNumber', []))).status, 200);
  await post(gw.url('eth', 'metrics-good-key-0001'), rpc('eth_chainId', []));
  await post(gw.url('eth', 'metrics-bad-key-00001'), rpc('eth_blockNumber', []));
  for (let i = 0; i < 3; i++) await post(gw.url('eth', 'metrics-tiny-key-0001'), rpc('eth_blockNumber', []));
  await post(gw.url('eth', 'metrics-good-key-0001'), rpc('made_up_method_1', []));
  await post(gw.url('eth', 'metrics-good-key-0001'), rpc('made_up_method_2', []));

  const res = await scrape(`${gw.origin}/metrics`);
  t.equal(res.status, 200);
  t.match(res.type, /^text\/plain; version=0\.0\.4/);
  const m = res.text;
  t.equal(sample(m, 'tollgate_calls_total', { network: 'eth', method: 'eth_blockNumber', status: 'ok' }), 5);
  t.equal(sample(m, 'tollgate_calls_total', { network: 'eth', method: 'eth_chainId', status: 'ok' }), 1);
  t.equal(sample(m, 'tollgate_calls_total', { network: 'eth', method: 'eth_blockNumber', status: 'UNAUTHORIZED' }), 1);
  t.equal(sample(m, 'tollgate_calls_total', { network: 'eth', method: 'eth_blockNumber', status: 'CREDITS_EXHAUSTED' }), 1);
  t.equal(sample(m, 'tollgate_calls_total', { network: 'eth', method: 'other', status: 'METHOD_NOT_FOUND' }), 2, 'unknown methods share one label value');
  t.notMatch(m, 'made_up_method', 'clients cannot create label values');
  t.equal(sample(m, 'tollgate_credits_total', { network: 'eth', method: 'eth_blockNumber' }), 5 * 80, 'credits count only charged calls');
  t.equal(sample(m, 'tollgate_credits_total', { network: 'eth', method: 'eth_chainId' }), 5);
  t.equal(sample(m, 'tollgate_errors_total', { network: 'eth', method: 'eth_blockNumber', error: 'CREDITS_EXHAUSTED' }), 1);
  t.equal(sample(m, 'tollgate_errors_total', { network: 'eth', method: 'eth_blockNumber', error: 'UNAUTHORIZED' }), 1);
  t.equal(sample(m, 'tollgate_call_duration_seconds_count', { network: 'eth', method: 'eth_blockNumber', status: 'ok' }), 5);
  t.equal(sample(m, 'tollgate_call_duration_seconds_bucket', { network: 'eth', method: 'eth_blockNumber', status: 'ok', le: '+Inf' }), 5);
  t.match(m, /# TYPE tollgate_call_duration_seconds histogram/);
  t.equal(sample(m, 'tollgate_upstream_healthy', { network: 'eth', upstream: 'tiny-node', role: 'primary' }), 1, 'upstream health from the selector');
  t.equal(sample(m, 'tollgate_upstream_in_flight', { network: 'eth', upstream: 'tiny-node', role: 'primary' }), 0);
  t.notMatch(m, /metrics-(good|bad|tiny)-key/, 'no key appears in the metrics');
  t.equal((await request(`${gw.origin}/metrics`, { method: 'POST', body: '' })).statusCode, 405);
});

t.test('a metrics token keeps scrapers out unless they send it; process metrics are on by default', async (t) => {
  const token = 'metrics-token-0123456789abcdef';
  const gw = await startTestGateway(
    { networks: [{ name: 'eth', families: ['evm'], upstreams: [{ url: upstream.url }] }], plugins: { metrics: { token, path: '/internal/metrics' } } },
    [metrics(), httpTransport(), evmFamily()],
  );
  t.teardown(() => gw.close());
  t.equal((await scrape(`${gw.origin}/internal/metrics`)).status, 401);
  t.equal((await scrape(`${gw.origin}/internal/metrics`, { authorization: 'Bearer wrong-token-0123456789' })).status, 401);
  const ok = await scrape(`${gw.origin}/internal/metrics`, { authorization: `Bearer ${token}` });
  t.equal(ok.status, 200);
  t.match(ok.text, /process_cpu_user_seconds_total/);
  t.equal((await scrape(`${gw.origin}/metrics`)).status, 404, 'only the configured path');
});
