import t from 'tap';
import { startAnvil, type AnvilInstance } from '@tollgate/devnet';
import { Tokens } from '../core/plugin-api.js';
import { httpTransport } from '../plugins/http/index.js';
import { evmFamily } from '../plugins/evm/index.js';
import { health } from '../plugins/health/index.js';
import { startTestGateway } from './helpers/gateway.js';
import { post, rpc } from './helpers/json-rpc.js';
import { until } from './helpers/until.js';

// Two nodes of one chain, the first 20 blocks ahead; it dies. The other is far behind the head the gateway
// has shown (more than maxLagBlocks): it is lagging, and it is the only node that answers. The gateway
// must keep serving through it what does not show a head (never "network unavailable"), hold back what
// would show an older head (-33505, retryable), and stay ready.
const GENESIS = { args: ['--timestamp', '1700000000'] };
const [ahead, behind] = (await Promise.all([startAnvil(GENESIS), startAnvil(GENESIS)])) as [AnvilInstance, AnvilInstance];
t.teardown(() => Promise.all([ahead.stop(), behind.stop()]));
await ahead.rpc('anvil_mine', ['0x14']);
const KEY = 'last-resort-key-000001';
const gw = await startTestGateway(
  {
    plans: { big: { dailyCredits: 1e12, creditsPerSecond: 1e9, failover: false } },
    keys: [{ key: KEY, id: 'resort', plan: 'big' }],
    networks: [{ name: 'eth', families: ['evm'], upstreams: [{ name: 'ahead', url: ahead.url }, { name: 'behind', url: behind.url }] }],
    upstreamDefaults: { timeoutMs: 2_000, connectTimeoutMs: 500 },
    failover: { maxLagBlocks: 5, breaker: { failureThreshold: 2, cooldownMs: 500 }, probe: { intervalMs: 100, timeoutMs: 1_000 } },
  },
  [health(), httpTransport(), evmFamily()],
);
t.teardown(() => gw.close());
const selector = gw.gateway.container.resolve(Tokens.UpstreamSelector);
const call = async (method: string, params: unknown[] = []): Promise<{ status: number; result?: unknown; error?: { code: number } }> => {
  const answer = await post(gw.url('eth', KEY), rpc(method, params));
  return { status: answer.status, ...(answer.json as object) };
};

t.test('every primary lagging: they serve as a last resort, head answers are held to the floor', async (t) => {
  await until('the gateway showed head 20', async () => (await call('eth_blockNumber')).result === '0x14');
  ahead.process.kill('SIGKILL');
  await until('the dead node is out of the route', async () => (await call('eth_chainId')).result !== undefined && (await call('eth_blockNumber')).error !== undefined);
  // Several probes found it lagging: enough to have opened its breaker, had lag counted against it.
  const probesOf = (): number => (selector.status!().find((u) => u.name === 'behind')!.details.counters as { probes: number }).probes;
  const probed = probesOf();
  await until('the lagging node was probed 5 more times', () => probesOf() >= probed + 5);
  t.match(selector.status!().find((u) => u.name === 'behind')!.details, { lagging: true, breaker: { state: 'closed' } }, 'it is lagging, and its breaker stays closed');
  const answers = [];
  for (let i = 0; i < 30; i++) answers.push(await call(i % 3 === 2 ? 'eth_blockNumber' : 'eth_chainId'));
  const chainIds = answers.filter((_, i) => i % 3 !== 2);
  const heads = answers.filter((_, i) => i % 3 === 2);
  t.same(chainIds.filter((a) => a.result !== '0x7a69'), [], 'every call that shows no head is answered by the lagging node');
  t.same(heads.filter((a) => a.error?.code !== -33505), [], 'every head answer is held back as behind (-33505), none is "unavailable"');
  const ready = await post(new URL('/readyz', gw.url('eth', KEY)).href, undefined, {}, 'GET');
  t.equal(ready.status, 200, 'the gateway serves the network, so it is ready');
  await behind.rpc('anvil_mine', ['0x14']);
  await until('the node caught up: head answers flow again', async () => (await call('eth_blockNumber')).result === '0x14');
});
