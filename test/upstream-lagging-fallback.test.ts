import t from 'tap';
import { startAnvil, type AnvilInstance } from '@tollgate/devnet';
import { Tokens } from '../core/plugin-api.js';
import { httpTransport } from '../plugins/http/index.js';
import { evmFamily } from '../plugins/evm/index.js';
import { startTestGateway } from './helpers/gateway.js';
import { post, rpc } from './helpers/json-rpc.js';
import { until } from './helpers/until.js';

// Two nodes of one chain, the first 20 blocks ahead, so the second is lagging (beyond maxLagBlocks) and
// gets no traffic while the first serves. The first dies; its breaker is still closed. The call that
// finds it dead must be answered by the lagging node (what shows no head needs no floor), not refused as
// "network unavailable": a client of a network with a live node never sees -33503.
const GENESIS = { args: ['--timestamp', '1700000000'] };
const [ahead, behind] = (await Promise.all([startAnvil(GENESIS), startAnvil(GENESIS)])) as [AnvilInstance, AnvilInstance];
t.teardown(() => Promise.all([ahead.stop(), behind.stop()]));
await ahead.rpc('anvil_mine', ['0x14']);
const KEY = 'lagging-fallback-key-01';
const gw = await startTestGateway(
  {
    plans: { big: { dailyCredits: 1e12, creditsPerSecond: 1e9, failover: false } },
    keys: [{ key: KEY, id: 'fallback', plan: 'big' }],
    networks: [{ name: 'eth', families: ['evm'], upstreams: [{ name: 'ahead', url: ahead.url }, { name: 'behind', url: behind.url }] }],
    upstreamDefaults: { timeoutMs: 2_000, connectTimeoutMs: 500 },
    // No active probes: the heads are learned from answers, and the breakers move only with calls.
    failover: { maxLagBlocks: 5, breaker: { failureThreshold: 3, cooldownMs: 60_000 }, probe: { intervalMs: 0 } },
  },
  [httpTransport(), evmFamily()],
);
t.teardown(() => gw.close());
const selector = gw.gateway.container.resolve(Tokens.UpstreamSelector);
const call = async (method: string, params: unknown[] = []): Promise<{ status: number; result?: unknown; error?: { code: number } }> => {
  const answer = await post(gw.url('eth', KEY), rpc(method, params));
  return { status: answer.status, ...(answer.json as object) };
};
const details = (name: string): Record<string, unknown> => selector.status!().find((u) => u.name === name)!.details;

t.test('the node at the head dies: the next call is answered by the lagging node', async (t) => {
  await until('the gateway showed head 20 and knows the other node lags', async () => (await call('eth_blockNumber')).result === '0x14' && details('behind').lagging === true);
  t.match(details('behind'), { lagging: true, breaker: { state: 'closed' } }, 'lagging, with its breaker closed');
  ahead.process.kill('SIGKILL');
  await until('the dead node refuses connections', () => fetch(ahead.url, { method: 'POST' }).then(() => false, () => true));
  t.same(await call('eth_chainId'), { status: 200, jsonrpc: '2.0', id: 1, result: '0x7a69' }, 'answered by the lagging node, not -33503');
  t.match(details('ahead'), { breaker: { state: 'closed', consecutiveFailures: 1 } }, 'while the dead node\'s breaker was still closed');
});
