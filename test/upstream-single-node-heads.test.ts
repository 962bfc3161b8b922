import t from 'tap';
import type { GatewayConfigInput } from '../core/index.js';
import { startAnvil } from '@tollgate/devnet';
import { startGatewayProcess, type GatewayProcess } from './helpers/gateway-process.js';
import { redisAvailable, startRedisServer } from './helpers/redis-server.js';
import { adminRequest } from './helpers/admin-request.js';
import { post, rpc } from './helpers/json-rpc.js';
import { until } from './helpers/until.js';

// One network with ONE node (Anvil, a block a second), two gateway processes on one Redis: the head floor
// is shared, so while one process serves alone the other's view of its only node falls behind the floor.
// That process must keep serving (and keep learning the node's head), never refuse the network.
if (!(await redisAvailable())) {
  t.fail('redis-server is not installed (apt-get install redis-server)');
  process.exit(1);
}
const node = await startAnvil({ blockTime: 1 });
t.teardown(() => node.stop());
const redis = await startRedisServer();
t.teardown(() => redis.stop());

const KEY = 'single-node-heads-key-01';
const TOKEN = 'admin-token-single-node-heads-0001';
const MAX_LAG = 5;
const config: GatewayConfigInput = {
  plans: { big: { dailyCredits: 1e12, creditsPerSecond: 1e9, failover: false } },
  keys: [{ key: KEY, id: 'heads', plan: 'big' }],
  networks: [{ name: 'eth', families: ['evm'], upstreams: [{ name: 'only', url: node.url }] }],
  failover: { maxLagBlocks: MAX_LAG },
  plugins: { admin: { token: TOKEN }, 'ledger-redis': { url: redis.url, prefix: 'single-heads:' } },
};
const [busy, idle] = (await Promise.all([
  startGatewayProcess({ store: 'redis', admin: true, health: true, config }),
  startGatewayProcess({ store: 'redis', admin: true, health: true, config }),
])) as [GatewayProcess, GatewayProcess];
t.teardown(() => Promise.all([busy.stop(), idle.stop()]));

const call = async (gateway: GatewayProcess, method: string, params: unknown[] = []): Promise<{ status: number; result?: unknown; error?: { code: number; message: string } }> => {
  const answer = await post(`${gateway.origin}/eth/v3/${KEY}`, rpc(method, params));
  return { status: answer.status, ...(answer.json as object) };
};
const headOf = (answer: { result?: unknown }): number => Number.parseInt(answer.result as string, 16);
/** What a process's selector knows: the network's highest head (its floor included) and its node's. */
const view = async (gateway: GatewayProcess): Promise<{ head: number | null; floor: number | null; lagging: boolean; probes: number }> => {
  const { body } = await adminRequest(`${gateway.origin}/admin/v1/upstreams`, TOKEN, 'GET');
  const [only] = body.upstreams as Array<{ details: { head: number | null; floor: number | null; lagging: boolean; counters: { probes: number } } }>;
  return { head: only!.details.head, floor: only!.details.floor, lagging: only!.details.lagging, probes: only!.details.counters.probes };
};

t.test('a process idle while the shared head floor moves far ahead still answers, and learns the head again', async (t) => {
  const first = await call(idle, 'eth_blockNumber');
  t.equal(first.status, 200, 'the idle process answered once: it knows its node\'s head');
  for (let round = 1; round <= 3; round++) {
    // Many blocks at once, mined on the node itself: only the busy process sees them through an answer.
    await node.rpc('anvil_mine', [`0x${(MAX_LAG * 4).toString(16)}`]);
    const seen = headOf(await call(busy, 'eth_blockNumber'));
    // The floor reaches the idle process through Redis: from then on its node looks far behind.
    await until(`round ${round}: the idle process learned floor ${seen}`, async () => ((await view(idle)).floor ?? 0) >= seen);
    const answers = [];
    for (let i = 0; i < 10; i++) answers.push(await call(idle, i % 2 === 0 ? 'eth_chainId' : 'eth_blockNumber'));
    const refused = answers.filter((a) => a.status !== 200 || a.error !== undefined);
    t.same(refused, [], `round ${round}: every call on the idle process is answered`);
    const heads = answers.filter((_, i) => i % 2 === 1).map(headOf);
    t.ok(heads.every((h) => h >= seen), `round ${round}: its heads (${heads.join(', ')}) are never below the floor ${seen}`);
    t.notOk((await view(idle)).lagging, `round ${round}: it learned its node is at the head`);
    const ready = await post(`${idle.origin}/readyz`, undefined, {}, 'GET');
    t.equal(ready.status, refused.length === 0 ? 200 : 503, `round ${round}: /readyz says ready exactly when it serves`);
  }
});

t.test('with no call at all, the idle process learns its node\'s head by itself once it falls behind the floor', async (t) => {
  await node.rpc('anvil_mine', [`0x${(MAX_LAG * 4).toString(16)}`]);
  const seen = headOf(await call(busy, 'eth_blockNumber'));
  await until('the idle process probed its node and found it at the floor', async () => {
    const v = await view(idle);
    return (v.floor ?? 0) >= seen && (v.head ?? 0) >= seen && !v.lagging;
  });
  t.ok((await view(idle)).probes > 0, 'it asked the node itself');
  t.equal((await call(idle, 'eth_chainId')).status, 200);
});
