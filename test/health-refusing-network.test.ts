import t from 'tap';
import { startAnvil } from '@tollgate/devnet';
import { httpTransport } from '../plugins/http/index.js';
import { evmFamily } from '../plugins/evm/index.js';
import { health } from '../plugins/health/index.js';
import { startTestGateway } from './helpers/gateway.js';
import { startChaosUpstream } from './helpers/failover-upstreams.js';
import { post, rpc } from './helpers/json-rpc.js';
import { until } from './helpers/until.js';

// `/readyz` must not say ready while the gateway refuses every call of a network, even when the node
// answers a probe right then: one node behind a relay that fails calls on demand, its breaker opened by
// them, the node answering again during the cooldown.
const node = await startAnvil();
t.teardown(() => node.stop());
const relay = await startChaosUpstream(node.url);
t.teardown(() => relay.close());
const KEY = 'readiness-refusal-key01';
const COOLDOWN_MS = 3_000;
const gw = await startTestGateway(
  {
    plans: { big: { dailyCredits: 1e12, creditsPerSecond: 1e9, failover: false } },
    keys: [{ key: KEY, id: 'ready', plan: 'big' }],
    networks: [{ name: 'eth', families: ['evm'], upstreams: [{ name: 'only', url: relay.url }] }],
    failover: { breaker: { failureThreshold: 2, cooldownMs: COOLDOWN_MS } },
  },
  [health(), httpTransport(), evmFamily()],
);
t.teardown(() => gw.close());
const origin = new URL(gw.url('eth', KEY)).origin;
const readyz = async (): Promise<{ status: number; body: { ready?: boolean; networks?: Record<string, string> } }> => {
  const answer = await post(`${origin}/readyz`, undefined, {}, 'GET');
  return { status: answer.status, body: answer.json as { ready?: boolean; networks?: Record<string, string> } };
};
const call = async (): Promise<number | undefined> => ((await post(gw.url('eth', KEY), rpc('eth_chainId', []))).json as { error?: { code: number } }).error?.code;

t.test('a network whose every breaker is open is not ready, whatever its node answers now', async (t) => {
  t.equal((await readyz()).status, 200, 'ready at first');
  relay.mode = 'http-500';
  t.equal(await call(), -33503);
  t.equal(await call(), -33503, 'two failed calls opened the breaker');
  relay.mode = 'forward';
  t.equal(await call(), -33503, 'the gateway refuses calls during the cooldown, though the node answers again');
  const during = await readyz();
  t.equal(during.status, 503, 'and /readyz says so');
  t.match(during.body, { ready: false, networks: { eth: /^calls are refused \(no upstream may take calls: every breaker is open/ } });
  await until('ready again once the cooldown ended', async () => (await readyz()).status === 200, COOLDOWN_MS + 10_000, 100);
  t.equal(await call(), undefined, 'and the next call is served');
});
