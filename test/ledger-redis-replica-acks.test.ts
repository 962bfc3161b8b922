/**
 * `replicaAcks`: a call is served only once its debit is on a replica, so a master SIGKILLed at any moment
 * leaves a promoted replica that has charged every answer delivered. A real master and replica; the
 * replica is stopped (SIGSTOP) and its link dropped so that replication cannot keep up, which without the
 * setting serves calls whose debits die with the master.
 */
import t from 'tap';
import { Redis } from 'ioredis';
import { httpTransport } from '../plugins/http/index.js';
import { evmFamily } from '../plugins/evm/index.js';
import { createRedisStore, ledgerRedis } from '../plugins/ledger-redis/index.js';
import { startTestGateway } from './helpers/gateway.js';
import { post, rpc } from './helpers/json-rpc.js';
import { startTinyUpstream } from './helpers/tiny-upstream.js';
import { redisAvailable, startRedisServer } from './helpers/redis-server.js';
import { until } from './helpers/until.js';

if (!(await redisAvailable())) {
  t.fail('redis-server is not installed (apt-get install redis-server)');
  process.exit(1);
}
const COST = 80; // eth_blockNumber
const upstream = await startTinyUpstream();
t.teardown(() => upstream.close());

async function replicationUp(replicaPort: number): Promise<boolean> {
  const client = new Redis({ port: replicaPort, lazyConnect: true });
  try {
    await client.connect();
    return /master_link_status:up/.test(await client.info('replication'));
  } finally {
    client.disconnect();
  }
}

t.test('with replicaAcks 1, no call is served whose debit is not on the replica: a master SIGKILLed then costs nothing unbilled', async (t) => {
  const master = await startRedisServer();
  t.teardown(() => master.stop());
  const replica = await startRedisServer(['--replicaof', '127.0.0.1', String(master.port)]);
  t.teardown(async () => { replica.resume(); await replica.stop(); });
  await until('the replica is in sync', () => replicationUp(replica.port), 30_000, 50);

  const settings = { url: master.url, prefix: 'acks:', commandTimeoutMs: 500, replicaAcks: 1 };
  const gw = await startTestGateway(
    {
      plans: { big: { dailyCredits: 1e12, creditsPerSecond: 1e9, failover: false } },
      keys: [{ key: 'redis-replica-acks-01', id: 'acks', plan: 'big' }],
      networks: [{ name: 'eth', families: ['evm'], upstreams: [{ url: upstream.url }] }],
    },
    [ledgerRedis(settings), httpTransport(), evmFamily()],
  );
  t.teardown(() => gw.close());
  const url = gw.url('eth', 'redis-replica-acks-01');
  let delivered = 0;
  const refusals = new Map<string, number>();
  const call = async (): Promise<void> => {
    const answer = await post(url, rpc('eth_blockNumber', []));
    const body = answer.json as { result?: unknown; error?: { code: number } } | undefined;
    if (answer.status === 200 && body?.result !== undefined) delivered++;
    else refusals.set(`${answer.status} ${body?.error?.code ?? ''}`, (refusals.get(`${answer.status} ${body?.error?.code ?? ''}`) ?? 0) + 1);
  };
  for (let i = 0; i < 20; i++) await Promise.all([call(), call()]);
  t.equal(delivered, 40, 'served while the replica keeps up');

  // The replica stops, and the master drops its link: what the master takes from now on exists only there.
  replica.pause();
  const admin = new Redis({ port: master.port, lazyConnect: true });
  await admin.connect();
  await admin.call('CLIENT', 'KILL', 'TYPE', 'replica');
  admin.disconnect();
  for (let i = 0; i < 10; i++) await Promise.all([call(), call()]);
  t.same(Object.fromEntries(refusals), { '503 -33507': 20 }, 'with the replica stalled, calls are refused METERING_UNAVAILABLE, not served unreplicated');

  await master.kill();
  replica.resume();
  const promoted = new Redis({ port: replica.port, lazyConnect: true });
  t.teardown(() => promoted.disconnect());
  await promoted.connect();
  await promoted.call('REPLICAOF', 'NO', 'ONE');
  const store = createRedisStore({ url: replica.url, prefix: 'acks:' });
  await store.open();
  t.teardown(() => store.close());
  // Every debit before the link dropped was acknowledged by the replica; none after it reached it.
  t.equal((await store.ledger.balance('acks', 1e12, new Date())).used / COST, delivered, 'the promoted replica charged every answer delivered, and nothing else');
});
