/**
 * The Redis store on a real Redis Cluster (three masters, three replicas, started by the test): every
 * script in one hash slot, key management without cross-slot scripts, and the exact-credit invariant
 * (credits charged = answers delivered) through a master's SIGKILL and a slot migration under load.
 */
import t, { type Test } from 'tap';
import { apiKeyHash, type StoredKey } from '../core/store-api.js';
import { createGateway, type GatewayConfigInput } from '../core/index.js';
import { httpTransport } from '../plugins/http/index.js';
import { evmFamily } from '../plugins/evm/index.js';
import { createRedisStore, ledgerRedis, type RedisStore } from '../plugins/ledger-redis/index.js';
import { hashTag } from '../plugins/ledger-redis/key-names.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';
import { post, rpc } from './helpers/json-rpc.js';
import { startTinyUpstream } from './helpers/tiny-upstream.js';
import { redisAvailable, startRedisServer } from './helpers/redis-server.js';
import { startRedisCluster } from './helpers/redis-cluster.js';
import { until } from './helpers/until.js';

if (!(await redisAvailable())) {
  t.fail('redis-server is not installed (apt-get install redis-server); the Redis Cluster tests need it');
  process.exit(1);
}

const COST = 80; // eth_blockNumber
const cluster = await startRedisCluster();
t.teardown(() => cluster.stop());
const upstream = await startTinyUpstream();
t.teardown(() => upstream.close());

async function openStore(prefix: string): Promise<RedisStore> {
  const store = createRedisStore({ cluster: { nodes: cluster.seeds.split(',') }, prefix });
  await store.open();
  return store;
}

function storedKey(id: string, apiKey: string, now = Date.now()): StoredKey {
  return { id, plan: 'big', keyHash: apiKeyHash(apiKey), keyHint: apiKey.slice(-4), createdAt: now, updatedAt: now };
}

/** Key ids whose hash tags fall on every master (checked below through CLUSTER KEYSLOT). */
const LOAD_KEYS = Array.from({ length: 9 }, (_, i) => `load-${i}`);

/**
 * Keeps `workers` clients calling through `gateways` with `LOAD_KEYS` round robin until `stop()`, counting
 * per key the answers that carried a result (delivered) and the others by status and error code.
 */
function startLoad(gateways: readonly TestGateway[], workers = 6): { delivered: Map<string, number>; errors: Map<string, number>; total(): number; stop(): Promise<void> } {
  const delivered = new Map<string, number>();
  const errors = new Map<string, number>();
  let stopped = false;
  let n = 0;
  const loop = async (w: number): Promise<void> => {
    while (!stopped) {
      const id = LOAD_KEYS[n++ % LOAD_KEYS.length]!;
      const gateway = gateways[(n + w) % gateways.length]!;
      const answer = await post(gateway.url('eth', `cluster-key-${id}`), rpc('eth_blockNumber', []));
      const body = answer.json as { result?: unknown; error?: { code: number } } | undefined;
      if (answer.status === 200 && body?.result !== undefined) delivered.set(id, (delivered.get(id) ?? 0) + 1);
      else {
        const kind = `${answer.status} ${body?.error?.code ?? ''}`;
        errors.set(kind, (errors.get(kind) ?? 0) + 1);
        await new Promise((resolve) => setImmediate(resolve));
      }
    }
  };
  const running = Promise.all(Array.from({ length: workers }, (_, w) => loop(w)));
  return {
    delivered,
    errors,
    total: () => [...delivered.values()].reduce((a, b) => a + b, 0),
    async stop() {
      stopped = true;
      await running;
    },
  };
}

function loadConfig(): GatewayConfigInput {
  return {
    plans: { big: { dailyCredits: 1e12, creditsPerSecond: 1e9, failover: false } },
    keys: LOAD_KEYS.map((id) => ({ key: `cluster-key-${id}`, id, plan: 'big' })),
    networks: [{ name: 'eth', families: ['evm'], upstreams: [{ url: upstream.url }] }],
  };
}

async function startGateways(prefix: string): Promise<TestGateway[]> {
  return Promise.all(
    [0, 1].map(() => startTestGateway(loadConfig(), [ledgerRedis({ cluster: { nodes: cluster.seeds.split(',') }, prefix, commandTimeoutMs: 500 }), httpTransport(), evmFamily()])),
  );
}

/** Charged = delivered, key by key, once the gateways have stopped cleanly (refunds and cancellations written). */
async function assertExact(t: Test, prefix: string, delivered: Map<string, number>): Promise<void> {
  const store = await openStore(prefix);
  t.teardown(() => store.close());
  const charged: Record<string, number> = {};
  const answered: Record<string, number> = {};
  for (const id of LOAD_KEYS) {
    charged[id] = (await store.ledger.balance(id, 1e12, new Date())).used / COST;
    answered[id] = delivered.get(id) ?? 0;
  }
  t.same(charged, answered, 'credits charged = answers delivered, key by key');
}

t.test("the load's keys spread over every master", async (t) => {
  const slots = await Promise.all(LOAD_KEYS.map(async (id) => Number(await cluster.cli(['cluster', 'keyslot', hashTag(id)]))));
  // Each master serves a third of 16384 slots in order: the keys' slots fall into each third.
  const thirds = new Set(slots.map((slot) => Math.floor(slot / (16384 / 3))));
  t.equal(thirds.size, 3, `slots ${slots.join(', ')}`);
});

t.test('key management on a cluster: create, look up, rotate, revoke and list, with no cross-slot script', async (t) => {
  const store = await openStore('keys:');
  t.teardown(() => store.close());
  const keys = store.keys;
  t.equal(await keys.insert(storedKey('alpha', 'cluster-api-key-alpha')), true, 'created');
  t.equal(await keys.insert(storedKey('alpha', 'cluster-api-key-other')), false, 'an id in use is refused');
  t.equal(await keys.insert(storedKey('beta', 'cluster-api-key-alpha')), false, 'an API key in use is refused');
  t.equal((await keys.find('cluster-api-key-alpha'))?.id, 'alpha', 'looked up by its hash');
  t.equal(await keys.find('cluster-api-key-other'), undefined, "the refused insert left no key behind");

  const rotated = await keys.update('alpha', { keyHash: apiKeyHash('cluster-api-key-alpha-2'), keyHint: 'ha-2' }, Date.now());
  t.equal(rotated?.keyHash, apiKeyHash('cluster-api-key-alpha-2'));
  t.equal((await keys.find('cluster-api-key-alpha-2'))?.id, 'alpha', 'the new API key works');
  t.equal(await keys.find('cluster-api-key-alpha'), undefined, 'the old one does not');
  t.equal(await store.connection.client.get(store.connection.names.keyHash(apiKeyHash('cluster-api-key-alpha'))), null, "the old hash's entry is gone");

  await keys.update('alpha', { revokedAt: Date.now() }, Date.now());
  t.equal((await keys.find('cluster-api-key-alpha-2'))?.revoked, true, 'revoked: refused like an unknown key');

  // A create that stopped after claiming the hash entry, before writing the record (the commit point).
  await store.connection.client.sadd(store.connection.names.ids, 'half');
  await store.connection.client.set(store.connection.names.keyHash(apiKeyHash('cluster-api-key-half')), 'half');
  t.equal(await keys.find('cluster-api-key-half'), undefined, 'a half-created key answers to nothing');
  t.same((await keys.list()).map((k) => k.id), ['alpha'], 'and is not listed');
  t.equal(await keys.insert(storedKey('gamma', 'cluster-api-key-half')), true, 'its API key can be created again: the stale entry is taken over');
  t.equal((await keys.find('cluster-api-key-half'))?.id, 'gamma');
  // An entry left pointing at a key that rotated away is disowned by that key's record.
  await store.connection.client.set(store.connection.names.keyHash(apiKeyHash('cluster-api-key-alpha')), 'alpha');
  t.equal(await keys.find('cluster-api-key-alpha'), undefined, "an entry the key's record disowns leads nowhere");
});

t.test('a plain Redis URL that is a Cluster node is refused at start with one line', async (t) => {
  const node = cluster.nodes[0]!;
  const attempt = createGateway({ config: { ...loadConfig(), log: { level: 'silent' } }, plugins: [ledgerRedis({ url: `redis://${node.address}` }), httpTransport(), evmFamily()] });
  await t.rejects(attempt, {
    message: `ledger-redis: Redis at ${node.address} is a node of a Redis Cluster: name its nodes with --redis-cluster <host:port,…> (plugins.ledger-redis.cluster.nodes) instead of --redis <url> (plugins.ledger-redis.url)`,
  });
});

t.test('cluster nodes that are a plain Redis are refused at start with one line', async (t) => {
  const plain = await startRedisServer();
  t.teardown(() => plain.stop());
  const attempt = createGateway({
    config: { ...loadConfig(), log: { level: 'silent' } },
    plugins: [ledgerRedis({ cluster: { nodes: [`127.0.0.1:${plain.port}`] }, connectTimeoutMs: 1500 }), httpTransport(), evmFamily()],
  });
  await t.rejects(attempt, { message: `ledger-redis: Redis at cluster 127.0.0.1:${plain.port} is not a Redis Cluster: name it with --redis <url> (plugins.ledger-redis.url) instead of --redis-cluster` });
});

t.test('a master SIGKILLed under load: a replica takes over, and credits charged = answers delivered', async (t) => {
  const prefix = 'failover:';
  const gateways = await startGateways(prefix);
  let closed = false;
  const close = async (): Promise<void> => {
    if (closed) return;
    closed = true;
    await Promise.all(gateways.map((g) => g.close()));
  };
  t.teardown(close);
  const load = startLoad(gateways);
  t.teardown(() => load.stop());
  await until('calls before the fault', () => load.total() >= 200, 60_000);
  const [victim] = await cluster.masters();
  await victim!.node.kill();
  const killedAt = load.total();
  await cluster.healthy(60_000);
  await until('calls on every key after the failover', () => load.total() >= killedAt + 300, 60_000);
  await load.stop();
  await close();
  t.comment(`delivered ${load.total()}, errors ${JSON.stringify(Object.fromEntries(load.errors))}`);
  t.same([...load.errors.keys()].filter((kind) => kind !== '503 -33507'), [], 'the only error clients saw: METERING_UNAVAILABLE while the slot had no master');
  await assertExact(t, prefix, load.delivered);
  await victim!.node.restart();
  await cluster.healthy(60_000);
});

t.test('slots migrated under load (redis-cli --cluster reshard): credits charged = answers delivered', async (t) => {
  const prefix = 'reshard:';
  const gateways = await startGateways(prefix);
  let closed = false;
  const close = async (): Promise<void> => {
    if (closed) return;
    closed = true;
    await Promise.all(gateways.map((g) => g.close()));
  };
  t.teardown(close);
  const load = startLoad(gateways);
  t.teardown(() => load.stop());
  await until('calls before the migration', () => load.total() >= 200, 60_000);
  const masters = (await cluster.masters()).filter((m) => m.slots > 0);
  const before = load.total();
  // Every slot of the first master moves to the second: the keys on it migrate while they are debited.
  await cluster.reshard(masters[0]!.node, masters[1]!.node, masters[0]!.slots);
  const during = load.total() - before;
  await until('calls after the migration', () => load.total() >= before + during + 200, 60_000);
  await load.stop();
  await close();
  t.ok(during > 0, `${during} calls answered while slots moved`);
  t.comment(`delivered ${load.total()}, errors ${JSON.stringify(Object.fromEntries(load.errors))}`);
  // MOVED and ASK are followed; a script whose keys are split by the migration gets TRYAGAIN until its slot has moved.
  t.same([...load.errors.keys()].filter((kind) => kind !== '503 -33507'), [], 'no error but METERING_UNAVAILABLE (a slot still moving after the retries)');
  await assertExact(t, prefix, load.delivered);
});
