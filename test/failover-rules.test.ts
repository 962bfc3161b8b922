import t from 'tap';
import { Tokens } from '../core/plugin-api.js';
import { CircuitBreaker } from '../core/upstream/circuit-breaker.js';
import { isCapacityError } from '../core/jsonrpc/json-rpc-protocol.js';
import type { FailoverSelector } from '../core/upstream/failover-selector.js';
import { isRevert } from '../plugins/evm/answers.js';
import { httpTransport } from '../plugins/http/index.js';
import { evmFamily } from '../plugins/evm/index.js';
import { startTestGateway } from './helpers/gateway.js';
import { post, rpc, type RawAnswer } from './helpers/json-rpc.js';
import { startChaosUpstream, until, upstreamView, type ChaosMode, type ChaosUpstream } from './helpers/failover-upstreams.js';

t.test('provider capacity errors are told apart from answers about the call', async (t) => {
  const capacity = [
    { code: -32005, message: 'limit exceeded' },
    { code: -32005, message: 'daily request count exceeded, request rate limited' },
    { code: 429, message: 'Too Many Requests' },
    { code: -32000, message: 'rate limited' },
    { code: -32603, message: 'Your app has exceeded its compute units per second capacity.' },
    { code: -32007, message: 'request limit reached' },
    { code: -32098, message: 'something the provider said' },
  ];
  const answers = [
    { code: -32005, message: 'query returned more than 10000 results' },
    { code: -32005, message: 'query timeout exceeded' },
    { code: 3, message: 'execution reverted: rate limit' },
    { code: -32000, message: 'execution reverted: pool over capacity' },
    { code: -32602, message: 'invalid argument 0: hex string has length 3, want 40 for common.Address' },
    { code: -32000, message: 'nonce too low' },
    { code: -32000, message: 'header not found' },
    { code: -32602, message: 'Log response size exceeded. You can make eth_getLogs requests with up to a 2K block range' },
    { code: -32001, message: 'Resource not found' },
  ];
  // Reverts are told apart by the EVM family's hook: the core knows no network's errors.
  for (const e of capacity) t.ok(isCapacityError(e, isRevert), `capacity: ${e.code} ${e.message}`);
  for (const e of answers) t.notOk(isCapacityError(e, isRevert), `answer: ${e.code} ${e.message}`);
  t.ok(isCapacityError({ code: 3, message: 'execution reverted: rate limit' }), 'without the hook a revert\'s words are just words');
});

t.test('a circuit breaker opens after the threshold, lets one trial through after the cooldown, and closes on success', async (t) => {
  const breaker = new CircuitBreaker({ failureThreshold: 3, cooldownMs: 100 });
  t.notOk(breaker.failure(0));
  t.notOk(breaker.failure(1));
  t.notOk(breaker.success(), 'a success resets the count');
  t.notOk(breaker.failure(2));
  t.notOk(breaker.failure(3));
  t.ok(breaker.failure(4), 'the third consecutive failure opens it');
  t.equal(breaker.state, 'open');
  t.notOk(breaker.success(), 'an open breaker ignores a late answer');
  t.notOk(breaker.wake(50), 'still cooling');
  t.equal(breaker.coolingUntil, 104);
  t.ok(breaker.wake(104), 'half-open after the cooldown');
  t.ok(breaker.claimTrial(104, 1000), 'one trial');
  t.notOk(breaker.claimTrial(105, 1000), 'not two at once');
  t.ok(breaker.failure(200), 'a failed trial opens it again');
  t.ok(breaker.wake(300));
  t.ok(breaker.claimTrial(300, 10));
  t.ok(breaker.claimTrial(311, 10), 'an unfinished trial is given up after its hold');
  t.ok(breaker.success(), 'a successful trial closes it');
  t.equal(breaker.state, 'closed');
  t.same(breaker.transitions, { opened: 2, halfOpened: 2, closed: 1 });
});

// Loopback upstreams only, probes off unless said otherwise: each rule on its own.
const servers: ChaosUpstream[] = [];
const chaos = async (mode: ChaosMode): Promise<ChaosUpstream> => {
  const server = await startChaosUpstream(undefined, mode);
  servers.push(server);
  return server;
};
t.teardown(() => Promise.all(servers.map((s) => s.close())));
const [fail1, fail2, fail3] = [await chaos('http-500'), await chaos('http-500'), await chaos('http-500')];
const [hang1, hang2] = [await chaos('hang'), await chaos('hang')];
const [refusing, partner] = [await chaos('http-500'), await chaos('echo')];
const [trial, backup] = [await chaos('http-500'), await chaos('echo')];
const [downPrimary, downPartner] = [await chaos('http-500'), await chaos('http-500')];

const PLAIN = 'rules-plain-key-0001';
const GROWTH = 'rules-growth-key-001';
const noProbes = { probe: { intervalMs: 0 } };
const gw = await startTestGateway(
  {
    plans: {
      plain: { dailyCredits: 1e12, creditsPerSecond: 1e9, failover: false },
      rich: { dailyCredits: 1e12, creditsPerSecond: 1e9, failover: true },
    },
    keys: [{ key: PLAIN, id: 'plain', plan: 'plain' }, { key: GROWTH, id: 'rich', plan: 'rich' }],
    networks: [
      {
        name: 'attempts',
        families: ['evm'],
        upstreams: [{ url: fail1.url }, { url: fail2.url }, { url: fail3.url }],
        failover: { ...noProbes, maxAttempts: 2, breaker: { failureThreshold: 100 } },
      },
      {
        name: 'deadline',
        families: ['evm'],
        upstreams: [{ url: hang1.url }, { url: hang2.url }],
        failover: { ...noProbes, deadlineMs: 400 },
      },
      {
        name: 'overrides',
        families: ['evm'],
        upstreams: [{ name: 'refusing', url: refusing.url }, { name: 'partner', url: partner.url, role: 'partner' }],
        failover: { ...noProbes, methods: ['eth_chainId'], plans: ['plain'], breaker: { failureThreshold: 100 } },
      },
      {
        name: 'trial',
        families: ['evm'],
        upstreams: [{ name: 'trial', url: trial.url }, { name: 'backup', url: backup.url }],
        failover: { ...noProbes, breaker: { failureThreshold: 1, cooldownMs: 200 } },
      },
      {
        name: 'partner-trial',
        families: ['evm'],
        upstreams: [{ name: 'down', url: downPrimary.url }, { name: 'partner', url: downPartner.url, role: 'partner' }],
        failover: { ...noProbes, breaker: { failureThreshold: 1, cooldownMs: 200 } },
      },
    ],
    upstreamDefaults: { timeoutMs: 5_000 },
  },
  [httpTransport(), evmFamily()],
);
t.teardown(() => gw.close());
const selector = gw.gateway.container.resolve(Tokens.UpstreamSelector) as FailoverSelector;
const call = (network: string, key: string, method: string, params: unknown[] = []): Promise<RawAnswer> => post(gw.url(network, key), rpc(method, params));
const codeOf = (a: RawAnswer): number | undefined => (a.json as { error?: { code: number } }).error?.code;

t.test('no more than maxAttempts primaries are tried for one call', async (t) => {
  const res = await call('attempts', GROWTH, 'eth_chainId');
  t.equal(res.status, 503);
  t.equal(codeOf(res), -33503);
  t.equal(fail1.received.length + fail2.received.length + fail3.received.length, 2, 'two of the three primaries were asked');
});

t.test('the deadline bounds the whole call: no attempt starts after it', async (t) => {
  const started = Date.now();
  const res = await call('deadline', GROWTH, 'eth_chainId');
  const took = Date.now() - started;
  t.equal(res.status, 504, 'HTTP 504');
  t.equal(codeOf(res), -33504);
  t.ok(took < 4_000, `answered after ${took} ms, long before the 5 s upstream timeout`);
  t.equal(hang1.received.length + hang2.received.length, 1, 'the second primary was not tried after the deadline');
});

t.test('failover methods and plans can be configured per network', async (t) => {
  const eligible = await call('overrides', PLAIN, 'eth_chainId');
  t.equal(eligible.status, 200, 'a listed method on a listed plan goes to the partner');
  t.equal(eligible.headers['x-tollgate-upstream'], 'partner');
  const method = await call('overrides', PLAIN, 'eth_getUncleByBlockHashAndIndex', [`0x${'00'.repeat(32)}`, '0x0']);
  t.equal(method.status, 503, 'a method the family marks eligible but the list leaves out does not');
  const plan = await call('overrides', GROWTH, 'eth_chainId');
  t.equal(plan.status, 503, 'a plan with failover: true that the list leaves out does not');
  t.equal(partner.received.length, 1, 'the partner got exactly the eligible call');
  refusing.mode = 'http-401';
  const refused = await call('overrides', PLAIN, 'eth_chainId');
  t.equal(refused.status, 200, 'a primary refusing the gateway\'s credentials is a failure: the partner answers');
  t.notMatch(refused.text, /invalid project id/, 'the provider\'s refusal never reaches the client');
});

t.test('without probes, the first call after the cooldown is the half-open trial', async (t) => {
  const view = (): ReturnType<typeof upstreamView> => upstreamView(selector, 'trial', 'trial');
  let res = await call('trial', GROWTH, 'eth_chainId');
  while (view().breaker.state !== 'open') res = await call('trial', GROWTH, 'eth_chainId');
  t.equal(res.status, 200, 'the failed attempt was retried on the backup');
  t.equal(view().breaker.state, 'open');
  trial.mode = 'echo';
  const served: string[] = [];
  await until('the recovered upstream serves again', async () => {
    served.push(String((await call('trial', GROWTH, 'eth_chainId')).headers['x-tollgate-upstream']));
    return served.includes('trial');
  }, 10_000);
  t.equal(view().breaker.state, 'closed');
  t.match(view().breaker, { halfOpened: 1, closed: 1 });
});

t.test('without probes, a partner whose breaker opened gets its trial from the next eligible call', async (t) => {
  const uncle = [`0x${'00'.repeat(32)}`, '0x0'];
  const first = await call('partner-trial', GROWTH, 'eth_getUncleByBlockHashAndIndex', uncle);
  t.equal(first.status, 503, 'primary and partner both fail');
  t.equal(upstreamView(selector, 'partner-trial', 'partner').breaker.state, 'open');
  downPartner.mode = 'echo';
  let answer: RawAnswer | undefined;
  await until('the partner answers again', async () => {
    answer = await call('partner-trial', GROWTH, 'eth_getUncleByBlockHashAndIndex', uncle);
    return answer.status === 200;
  }, 10_000);
  t.equal(answer!.headers['x-tollgate-upstream'], 'partner');
  t.equal(upstreamView(selector, 'partner-trial', 'partner').breaker.state, 'closed', 'the trial closed its breaker');
  t.equal(upstreamView(selector, 'partner-trial', 'down').breaker.state, 'open', 'the failing primary stays out');
});
