import t from 'tap';
import type { GatewayConfigInput } from '../core/index.js';
import { startAnvil, type AnvilInstance } from '@tollgate/devnet';
import { startGatewayProcess, type GatewayProcess } from './helpers/gateway-process.js';
import { redisAvailable, startRedisServer } from './helpers/redis-server.js';
import { post, rpc } from './helpers/json-rpc.js';
import { until } from './helpers/until.js';
import { startTestGateway } from './helpers/gateway.js';
import { httpTransport } from '../plugins/http/index.js';
import { evmFamily } from '../plugins/evm/index.js';

// Two Anvil nodes of one chain (same genesis), the first 10 blocks ahead, both primaries of one network,
// behind gateway processes that share one Redis: the scenario, on real nodes and real processes.
if (!(await redisAvailable())) {
  t.fail('redis-server is not installed (apt-get install redis-server)');
  process.exit(1);
}
const GENESIS = { args: ['--timestamp', '1700000000'] };
const [leader, follower] = (await Promise.all([startAnvil(GENESIS), startAnvil(GENESIS)])) as [AnvilInstance, AnvilInstance];
t.teardown(() => Promise.all([leader.stop(), follower.stop()]));
await leader.rpc('anvil_mine', ['0xa']);
const redis = await startRedisServer();
t.teardown(() => redis.stop());

const KEY = 'head-floor-key-000001';
const config: GatewayConfigInput = {
  plans: { big: { dailyCredits: 1e12, creditsPerSecond: 1e9, failover: false } },
  keys: [{ key: KEY, id: 'head', plan: 'big' }],
  networks: [{ name: 'eth', families: ['evm'], upstreams: [{ name: 'leader', url: leader.url }, { name: 'follower', url: follower.url }] }],
  upstreamDefaults: { timeoutMs: 2_000, connectTimeoutMs: 1_000 },
  failover: { maxLagBlocks: 5, breaker: { failureThreshold: 2, cooldownMs: 500 }, probe: { intervalMs: 100, timeoutMs: 1_000 } },
  plugins: { 'ledger-redis': { url: redis.url, prefix: 'head-floor:' } },
};
const gateways: GatewayProcess[] = [];
t.teardown(() => Promise.all(gateways.map((g) => g.kill())));
const startGateway = async (): Promise<GatewayProcess> => {
  const gateway = await startGatewayProcess({ store: 'redis', config });
  gateways.push(gateway);
  return gateway;
};

/** One poll: the block number, or the error code the client got. */
interface Poll {
  readonly gateway: number;
  readonly head?: number;
  readonly code?: number;
  readonly status: number;
}

async function poll(gateway: number): Promise<Poll> {
  const answer = await post(`${gateways[gateway]!.origin}/eth/v3/${KEY}`, rpc('eth_blockNumber', []));
  const json = answer.json as { result?: string; error?: { code: number } } | undefined;
  if (typeof json?.result === 'string') return { gateway, head: Number.parseInt(json.result, 16), status: answer.status };
  return { gateway, code: json?.error?.code, status: answer.status };
}

/** `10 ×40, -33503 ×5, 12 ×35`: the sequence a client saw, runs folded. */
function fold(polls: readonly Poll[]): string {
  const runs: Array<[string, number]> = [];
  for (const p of polls) {
    const label = p.head !== undefined ? String(p.head) : `error ${p.code} (HTTP ${p.status})`;
    const lastRun = runs[runs.length - 1];
    if (lastRun !== undefined && lastRun[0] === label) lastRun[1]++;
    else runs.push([label, 1]);
  }
  return runs.map(([label, n]) => `${label} ×${n}`).join(', ');
}

t.test('a client polling eth_blockNumber through two instances while the leading node is killed never sees it decrease', async (t) => {
  await Promise.all([startGateway(), startGateway()]);
  const polls: Poll[] = [];
  let running = true;
  // One client, alternating between the two instances, as behind a load balancer.
  const client = (async () => {
    for (let i = 0; running; i++) polls.push(await poll(i % 2));
  })();
  await until('both instances answered the leader\'s head 20 times', () => polls.filter((p) => p.head === 10).length >= 20);
  leader.process.kill('SIGKILL');
  const killedAt = polls.length;
  // The follower is 10 blocks behind: until it catches up no instance may answer with its head.
  await until('40 polls after the kill', () => polls.length >= killedAt + 40);
  // A third instance started now has never seen the leader: it learns the head from the other two.
  await startGateway();
  const late = await Promise.all(Array.from({ length: 10 }, () => poll(2)));
  t.same(late.filter((p) => p.head !== undefined), [], 'the instance that never saw the leader still never answers an older head');
  t.ok(late.every((p) => p.code === -33503 || p.code === -33505), `it answers a retryable error instead: ${fold(late)}`);
  await follower.rpc('anvil_mine', ['0xc']);
  await until('both instances answer the follower\'s new head 12', () => polls.slice(-10).filter((p) => p.head === 12).length >= 6);
  running = false;
  await client;

  const sequence = fold(polls);
  t.comment(`eth_blockNumber as the client saw it: ${sequence}`);
  const heads = polls.flatMap((p) => (p.head === undefined ? [] : [p.head]));
  const decreases = heads.flatMap((h, i) => (i > 0 && h < heads[i - 1]! ? [`${heads[i - 1]} → ${h}`] : []));
  t.same(decreases, [], 'the head never decreased');
  t.ok(heads.includes(10) && heads[heads.length - 1] === 12, 'the client saw the leader\'s head, then the follower\'s once it passed it');
  const errors = polls.filter((p) => p.head === undefined);
  t.same([...new Set(errors.map((p) => p.code))].filter((c) => c !== -33503 && c !== -33505), [], 'meanwhile only retryable errors (-33503 unavailable, -33505 behind)');
  t.ok(polls.slice(killedAt).some((p) => p.head === undefined), 'the follower\'s older head was refused after the kill');
  t.ok(polls.some((p) => p.gateway === 0 && p.head === 12) && polls.some((p) => p.gateway === 1 && p.head === 12), 'both instances serve again');
});

t.test('a node within maxLagBlocks but behind the head shown: head answers get -33505, other calls are served', async (t) => {
  const [a, b] = (await Promise.all([startAnvil(GENESIS), startAnvil(GENESIS)])) as [AnvilInstance, AnvilInstance];
  t.teardown(() => Promise.all([a.stop(), b.stop()]));
  await Promise.all([a.rpc('anvil_mine', ['0xa']), b.rpc('anvil_mine', ['0x7'])]);
  const gw = await startTestGateway({ ...config, plugins: {}, networks: [{ name: 'eth', families: ['evm'], upstreams: [{ name: 'a', url: a.url }, { name: 'b', url: b.url }] }] }, [httpTransport(), evmFamily()]);
  t.teardown(() => gw.close());
  const call = async (method: string, params: unknown[]): Promise<{ status: number; result?: unknown; error?: { code: number; message: string }; retryAfter?: unknown }> => {
    const answer = await post(gw.url('eth', KEY), rpc(method, params));
    return { status: answer.status, retryAfter: answer.headers['retry-after'], ...(answer.json as object) };
  };
  await until('the gateway answers head 10', async () => (await call('eth_blockNumber', [])).result === '0xa');
  t.equal(((await call('eth_getBlockByNumber', ['latest', false])).result as { number: string }).number, '0xa', 'latest is block 10');
  a.process.kill('SIGKILL');
  await until('the dead node is out of the route', async () => (await call('eth_getBlockByNumber', ['0x1', false])).status === 200 && (await call('eth_blockNumber', [])).error !== undefined);
  const blockNumber = await call('eth_blockNumber', []);
  t.equal(blockNumber.status, 503);
  t.equal(blockNumber.error?.code, -33505, 'eth_blockNumber: the node\'s head 7 is not passed on');
  t.match(blockNumber.error?.message, /reached head 10 yet \(the closest is at 7\)/);
  t.equal(blockNumber.retryAfter, '1', 'retryable');
  t.equal((await call('eth_getBlockByNumber', ['latest', false])).error?.code, -33505, 'latest resolves to no block older than 10');
  t.equal(((await call('eth_getBlockByNumber', ['0x1', false])).result as { number: string }).number, '0x1', 'a block by number is served by the node that has it');
  await b.rpc('anvil_mine', ['0x3']);
  await until('the follower reached the head', async () => (await call('eth_blockNumber', [])).result === '0xa');
  t.equal(((await call('eth_getBlockByNumber', ['latest', false])).result as { number: string }).number, '0xa');
});
