import t from 'tap';
import type { Test } from 'tap';
import type { GatewayConfigInput } from '../core/index.js';
import { startAnvil, type AnvilInstance } from '@tollgate/devnet';
import { startGatewayProcess, type GatewayProcess } from './helpers/gateway-process.js';
import { redisAvailable, startRedisServer } from './helpers/redis-server.js';
import { startChaosUpstream } from './helpers/failover-upstreams.js';
import { post, rpc, type RawAnswer } from './helpers/json-rpc.js';

// A partner-like node with its own plan in front of one Anvil, and the operator's own node (another
// Anvil of the same chain), behind two gateway processes sharing one Redis.
if (!(await redisAvailable())) {
  t.fail('redis-server is not installed (apt-get install redis-server)');
  process.exit(1);
}
const GENESIS = { args: ['--timestamp', '1700000000'] };
const [metered, own] = (await Promise.all([startAnvil(GENESIS), startAnvil(GENESIS)])) as [AnvilInstance, AnvilInstance];
t.teardown(() => Promise.all([metered.stop(), own.stop()]));
const redis = await startRedisServer();
t.teardown(() => redis.stop());

const KEY = 'upstream-budget-key-01';
const CHAIN_ID_CREDITS = 5;
const DAILY_CALLS = 12;
const PER_SECOND = 4;

/** Starts two instances with `networks`, sharing Redis under `prefix`, their clocks standing still. */
async function twoInstances(t: Test, prefix: string, networks: GatewayConfigInput['networks']): Promise<GatewayProcess[]> {
  const config: GatewayConfigInput = {
    plans: { big: { dailyCredits: 1e12, creditsPerSecond: 1e9, failover: false } },
    keys: [{ key: KEY, id: 'budget', plan: 'big' }],
    networks,
    failover: { probe: { intervalMs: 0, timeoutMs: 1_000 } },
    plugins: { 'ledger-redis': { url: redis.url, prefix } },
  };
  const clockMs = Date.UTC(2026, 10, 26, 12);
  const gateways = await Promise.all([startGatewayProcess({ store: 'redis', config, clockMs }), startGatewayProcess({ store: 'redis', config, clockMs })]);
  t.teardown(() => Promise.all(gateways.map((g) => g.kill())));
  return gateways;
}

/** `n` eth_chainId calls spread over the instances, four at a time. */
async function burst(gateways: readonly GatewayProcess[], network: string, n: number): Promise<RawAnswer[]> {
  const answers: RawAnswer[] = [];
  for (let i = 0; i < n; i += 4) {
    answers.push(...(await Promise.all(Array.from({ length: Math.min(4, n - i) }, (_, k) => post(`${gateways[(i + k) % gateways.length]!.origin}/${network}/v3/${KEY}`, rpc('eth_chainId', []))))));
  }
  return answers;
}

const chainIdCalls = (received: readonly string[]): number => received.filter((m) => m === 'eth_chainId').length;

t.test('a daily credit budget holds across two instances: calls beyond it go to the other upstream, or get -33503', async (t) => {
  const partner = await startChaosUpstream(metered.url);
  t.teardown(() => partner.close());
  const budget = { dailyCredits: DAILY_CALLS * CHAIN_ID_CREDITS };
  const gateways = await twoInstances(t, 'budget-daily:', [
    { name: 'eth', families: ['evm'], upstreams: [{ name: 'metered', url: partner.url, weight: 1e6, budget }, { name: 'own', url: own.url }] },
    { name: 'solo', families: ['evm'], upstreams: [{ name: 'metered-solo', url: partner.url, budget }] },
  ]);
  const answers = await burst(gateways, 'eth', 40);
  t.same(answers.filter((a) => a.status !== 200 || (a.json as { result?: unknown }).result === undefined).map((a) => a.text), [], 'every call was answered');
  t.equal(chainIdCalls(partner.received), DAILY_CALLS, `the metered upstream got exactly its ${DAILY_CALLS} calls of the day, from both instances together`);
  t.equal(answers.filter((a) => a.headers['x-tollgate-upstream'] === 'own').length, 40 - DAILY_CALLS, 'the rest went to the other upstream');

  const solo = await burst(gateways, 'solo', 20);
  t.equal(chainIdCalls(partner.received), 2 * DAILY_CALLS, 'the solo network\'s budget is its own upstream\'s, kept apart');
  t.equal(solo.filter((a) => a.status === 200).length, DAILY_CALLS);
  const refused = solo.filter((a) => a.status === 503);
  t.equal(refused.length, 20 - DAILY_CALLS, 'beyond it, with no other upstream: the documented -33503');
  t.match(refused[0]?.json, { error: { code: -33503, message: 'every upstream of solo that could serve the call is over its own budget' } });
});

t.test('a requests-per-second budget holds across two instances, per second of the gateways\' clock', async (t) => {
  const partner = await startChaosUpstream(metered.url);
  t.teardown(() => partner.close());
  const gateways = await twoInstances(t, 'budget-rps:', [
    { name: 'eth', families: ['evm'], upstreams: [{ name: 'metered', url: partner.url, weight: 1e6, budget: { maxRequestsPerSecond: PER_SECOND } }, { name: 'own', url: own.url }] },
  ]);
  await burst(gateways, 'eth', 20);
  t.equal(chainIdCalls(partner.received), PER_SECOND, `${PER_SECOND} calls in the second, the rest elsewhere`);
  await Promise.all(gateways.map((g) => g.advance(1_000)));
  const next = await burst(gateways, 'eth', 20);
  t.equal(chainIdCalls(partner.received), 2 * PER_SECOND, 'the next second allows as many again');
  t.ok(next.every((a) => a.status === 200));
});
