import t, { type Test } from 'tap';
import { Agent, request } from 'node:http';
import type { GatewayConfigInput } from '../core/index.js';
import { startAnvil } from '@tollgate/devnet';
import { cleanUpWorkersGateway, startWorkersGateway, type WorkersGateway } from './helpers/workers-cli.js';
import { redisAvailable, startRedisServer } from './helpers/redis-server.js';
import { startRedisCluster } from './helpers/redis-cluster.js';
import { socketOwner } from './helpers/socket-owner.js';
import { until } from './helpers/until.js';

// `tollgate start --workers 2` on one Redis, and on a Redis Cluster, in front of ONE node (Anvil, a block
// a second): the workers share the head floor through the store. While one worker serves alone, the
// other's view of the node falls behind the floor; it must keep serving and learn the head again.
if (!(await redisAvailable())) {
  t.fail('redis-server is not installed (apt-get install redis-server)');
  process.exit(1);
}
const node = await startAnvil({ blockTime: 1 });
t.teardown(() => node.stop());

const KEY = 'single-node-workers-key1';
const TOKEN = 'admin-token-single-node-workers-001';
const MAX_LAG = 5;
const config: GatewayConfigInput = {
  server: { host: '127.0.0.1', port: 0 },
  log: { level: 'warn' },
  plans: { big: { dailyCredits: 1e12, creditsPerSecond: 1e9, failover: false } },
  keys: [{ key: KEY, id: 'workers-heads', plan: 'big' }],
  networks: [{ name: 'eth', families: ['evm'], upstreams: [{ name: 'only', url: node.url }] }],
  failover: { maxLagBlocks: MAX_LAG },
};

interface Answer {
  readonly status: number;
  readonly body: { result?: unknown; error?: { code: number; message: string }; upstreams?: Array<{ details: { floor: number | null; lagging: boolean } }> };
  readonly localPort: number;
}

function send(origin: string, agent: Agent, path: string, body?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = body === undefined ? { authorization: `Bearer ${TOKEN}` } : { 'content-type': 'application/json' };
    const req = request(`${origin}${path}`, { method: body === undefined ? 'GET' : 'POST', agent, headers }, (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text) as Answer['body'], localPort: req.socket!.localPort! }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

const rpc = (method: string): string => JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: [] });
const headOf = (answer: Answer): number => Number.parseInt(answer.body.result as string, 16);

/** Runs the idle-worker scenario on a started group. */
async function idleWorkerServes(t: Test, gateway: WorkersGateway): Promise<void> {
  const workers = gateway.workerPids();
  t.equal(workers.length, 2, 'two workers');
  // Keep-alive connections, one per agent: the primary hands each to one worker. One agent per worker.
  const byWorker = new Map<number, Agent>();
  const agents: Agent[] = [];
  t.teardown(() => agents.forEach((a) => a.destroy()));
  await until('a connection to each worker', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    agents.push(agent);
    const answer = await send(gateway.origin, agent, `/eth/v3/${KEY}`, rpc('eth_chainId'));
    const owner = socketOwner(gateway.port, answer.localPort, workers);
    if (owner !== undefined && !byWorker.has(owner)) byWorker.set(owner, agent);
    return byWorker.size === 2;
  }, 30_000);
  const [busy, idle] = [...byWorker.values()] as [Agent, Agent];
  const call = (agent: Agent, method: string): Promise<Answer> => send(gateway.origin, agent, `/eth/v3/${KEY}`, rpc(method));
  const floorOf = async (agent: Agent): Promise<number> => (await send(gateway.origin, agent, '/admin/v1/upstreams')).body.upstreams?.[0]?.details.floor ?? 0;

  t.equal((await call(idle, 'eth_blockNumber')).status, 200, 'the idle worker answered once: it knows its node\'s head');
  for (let round = 1; round <= 3; round++) {
    await node.rpc('anvil_mine', [`0x${(MAX_LAG * 4).toString(16)}`]);
    const seen = headOf(await call(busy, 'eth_blockNumber'));
    await until(`round ${round}: the idle worker learned floor ${seen}`, async () => (await floorOf(idle)) >= seen);
    const answers: Answer[] = [];
    for (let i = 0; i < 10; i++) answers.push(await call(idle, i % 2 === 0 ? 'eth_chainId' : 'eth_blockNumber'));
    t.same(answers.filter((a) => a.status !== 200 || a.body.error !== undefined).map((a) => a.body), [], `round ${round}: every call on the idle worker is answered`);
    const heads = answers.filter((_, i) => i % 2 === 1).map(headOf);
    t.ok(heads.every((h) => h >= seen), `round ${round}: its heads (${heads.join(', ')}) are never below the floor ${seen}`);
  }
}

/** The two stores that share heads between workers: one Redis, and a Redis Cluster. */
const stores: ReadonlyArray<{ readonly name: string; readonly start: () => Promise<{ args: string[]; stop: () => Promise<void> }> }> = [
  { name: 'one Redis', start: async () => { const redis = await startRedisServer(); return { args: ['--redis', redis.url], stop: () => redis.stop() }; } },
  { name: 'a Redis Cluster', start: async () => { const cluster = await startRedisCluster(); return { args: ['--redis-cluster', cluster.seeds], stop: () => cluster.stop() }; } },
];

for (const store of stores) {
  t.test(`--workers 2 on ${store.name}: the idle worker keeps serving its only node`, async (t) => {
    const { args, stop } = await store.start();
    t.teardown(stop);
    const gateway = await startWorkersGateway(config, ['--workers', '2', ...args], 90_000, { TOLLGATE_ADMIN_TOKEN: TOKEN });
    t.teardown(() => cleanUpWorkersGateway(gateway));
    await idleWorkerServes(t, gateway);
  });
}
