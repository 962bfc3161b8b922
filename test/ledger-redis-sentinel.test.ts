/**
 * The Redis store through Sentinel (a real master, replica and sentinel): calls are charged on the master
 * the sentinel names, and when that master is SIGKILLed under load the store follows the promoted
 * replica by itself, with credits charged = answers delivered.
 */
import t from 'tap';
import { httpTransport } from '../plugins/http/index.js';
import { evmFamily } from '../plugins/evm/index.js';
import { createRedisStore, ledgerRedis } from '../plugins/ledger-redis/index.js';
import { startTestGateway } from './helpers/gateway.js';
import { post, rpc } from './helpers/json-rpc.js';
import { startTinyUpstream } from './helpers/tiny-upstream.js';
import { redisAvailable } from './helpers/redis-server.js';
import { startRedisSentinel } from './helpers/redis-sentinel.js';
import { until } from './helpers/until.js';

if (!(await redisAvailable())) {
  t.fail('redis-server is not installed (apt-get install redis-server)');
  process.exit(1);
}
const COST = 80; // eth_blockNumber
const upstream = await startTinyUpstream();
t.teardown(() => upstream.close());

t.test('a master SIGKILLed under load: the sentinel promotes the replica, the store follows, charged = delivered', async (t) => {
  const setup = await startRedisSentinel();
  t.teardown(() => setup.stop());
  const settings = { sentinels: [setup.sentinels], name: setup.name, prefix: 'sentinel:', commandTimeoutMs: 500 };
  const gw = await startTestGateway(
    {
      plans: { big: { dailyCredits: 1e12, creditsPerSecond: 1e9, failover: false } },
      keys: [{ key: 'redis-sentinel-key-01', id: 'sentinel', plan: 'big' }],
      networks: [{ name: 'eth', families: ['evm'], upstreams: [{ url: upstream.url }] }],
    },
    [ledgerRedis(settings), httpTransport(), evmFamily()],
  );
  let closed = false;
  const close = async (): Promise<void> => {
    if (closed) return;
    closed = true;
    await gw.close();
  };
  t.teardown(close);
  const url = gw.url('eth', 'redis-sentinel-key-01');
  let delivered = 0;
  const errors = new Map<string, number>();
  let stopped = false;
  const worker = async (): Promise<void> => {
    while (!stopped) {
      const answer = await post(url, rpc('eth_blockNumber', []));
      const body = answer.json as { result?: unknown; error?: { code: number } } | undefined;
      if (answer.status === 200 && body?.result !== undefined) delivered++;
      else {
        const kind = `${answer.status} ${body?.error?.code ?? ''}`;
        errors.set(kind, (errors.get(kind) ?? 0) + 1);
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    }
  };
  const load = Promise.all(Array.from({ length: 4 }, worker));
  t.teardown(async () => { stopped = true; await load; });
  await until('calls before the fault', () => delivered >= 100, 60_000);
  await setup.master.kill();
  await until('the sentinel names the replica', async () => (await setup.masterPort()) === setup.replica.port, 60_000, 100);
  const promotedAt = delivered;
  await until('calls on the promoted replica', () => delivered >= promotedAt + 100, 60_000);
  stopped = true;
  await load;
  await close();
  t.comment(`delivered ${delivered}, errors ${JSON.stringify(Object.fromEntries(errors))}`);
  t.same([...errors.keys()].filter((kind) => kind !== '503 -33507'), [], 'the only error clients saw: METERING_UNAVAILABLE while there was no master');
  const store = createRedisStore(settings);
  await store.open();
  t.teardown(() => store.close());
  t.equal(store.connection.address, `sentinel master "${setup.name}" via ${setup.sentinels}`);
  t.equal((await store.ledger.balance('sentinel', 1e12, new Date())).used / COST, delivered, 'credits charged = answers delivered');
});
