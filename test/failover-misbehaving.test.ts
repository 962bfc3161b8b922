import t from 'tap';
import { Tokens } from '../core/plugin-api.js';
import { type CreditLedger } from '../core/store-api.js';
import type { FailoverSelector } from '../core/upstream/failover-selector.js';
import { httpTransport } from '../plugins/http/index.js';
import { evmFamily } from '../plugins/evm/index.js';
import { seedDevnet, startAnvil, type AnvilInstance } from '@tollgate/devnet';
import { startTestGateway } from './helpers/gateway.js';
import { post, rpc, type RawAnswer } from './helpers/json-rpc.js';
import { startChaosUpstream, until, upstreamView, type ChaosMode, type ChaosUpstream } from './helpers/failover-upstreams.js';

// Real Anvil nodes, and real loopback servers in front of them that misbehave on demand.
const [steady, leader, lagger] = (await Promise.all([startAnvil(), startAnvil(), startAnvil()])) as [AnvilInstance, AnvilInstance, AnvilInstance];
t.teardown(() => Promise.all([steady.stop(), leader.stop(), lagger.stop()]));
const seed = await seedDevnet(steady.url);
const chaos: ChaosUpstream[] = [];
const startChaos = async (target: string | undefined, mode: ChaosMode = 'forward'): Promise<ChaosUpstream> => {
  const server = await startChaosUpstream(target, mode);
  chaos.push(server);
  return server;
};
t.teardown(() => Promise.all(chaos.map((c) => c.close())));
const flaky = await startChaos(steady.url);
const quotaOnly = await startChaos(steady.url, 'capacity');
const dying = await startChaos(steady.url, 'die');
const witness = await startChaos(steady.url);

const KEY = 'misbehaving-key-00001';
const gw = await startTestGateway(
  {
    plans: { big: { dailyCredits: 1e12, creditsPerSecond: 1e9, failover: true } },
    keys: [{ key: KEY, id: 'k', plan: 'big' }],
    networks: [
      // One misbehaving primary beside a healthy one.
      { name: 'flaky', families: ['evm'], upstreams: [{ name: 'flaky', url: flaky.url }, { name: 'steady', url: steady.url }] },
      // A provider whose only node is over its quota.
      { name: 'quota', families: ['evm'], upstreams: [{ name: 'quota-only', url: quotaOnly.url }] },
      // Two healthy primaries (the same node twice): answers of every kind.
      { name: 'answers', families: ['evm'], upstreams: [{ name: 'one', url: steady.url }, { name: 'two', url: steady.url }] },
      // A primary that dies mid-request, tried first (its weight), and a witness that records what reaches it.
      {
        name: 'tx',
        families: ['evm'],
        upstreams: [{ name: 'dying', url: dying.url, weight: 100 }, { name: 'witness', url: witness.url }],
        failover: { probe: { intervalMs: 0 } },
      },
      // Two nodes whose heads we move apart.
      { name: 'lag', families: ['evm'], upstreams: [{ name: 'leader', url: leader.url }, { name: 'lagger', url: lagger.url }], failover: { maxLagBlocks: 2 } },
    ],
    // Fast enough for a test, slow enough that a healthy node on a busy machine never looks dead.
    upstreamDefaults: { timeoutMs: 1_500, connectTimeoutMs: 1_500 },
    failover: { breaker: { failureThreshold: 3, cooldownMs: 300 }, probe: { intervalMs: 50, timeoutMs: 1_000 } },
  },
  [httpTransport(), evmFamily()],
);
t.teardown(() => gw.close());

const selector = gw.gateway.container.resolve(Tokens.UpstreamSelector) as FailoverSelector;
const ledger = gw.gateway.container.resolve<CreditLedger>(Tokens.CreditLedger);
const used = async (): Promise<number> => (await ledger.balance('k', 1e12, new Date(gw.gateway.clock.now()))).used;
const call = (network: string, method: string, params: unknown[] = []): Promise<RawAnswer> => post(gw.url(network, KEY), rpc(method, params));
const servedBy = (answer: RawAnswer): string => String(answer.headers['x-tollgate-upstream'] ?? '');
const resultOf = (answer: RawAnswer): unknown => (answer.json as { result?: unknown }).result;
const totals = (network: string): { attempts: number; retries: number; failures: number } => {
  const all = selector.status().filter((s) => s.network === network).map((s) => (s.details as { counters: { attempts: number; retries: number; failures: number } }).counters);
  return { attempts: all.reduce((n, c) => n + c.attempts, 0), retries: all.reduce((n, c) => n + c.retries, 0), failures: all.reduce((n, c) => n + c.failures, 0) };
};

/** Sends `count` calls, `concurrency` at a time; returns the answers. */
async function burst(network: string, count: number, concurrency = 4): Promise<RawAnswer[]> {
  const answers: RawAnswer[] = [];
  let next = 0;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next++ < count) answers.push(await call(network, 'eth_getBlockByNumber', ['latest', false]));
  }));
  return answers;
}

const problems = (answers: RawAnswer[]): string[] => answers.filter((a) => a.status !== 200 || resultOf(a) === undefined).map((a) => `${a.status} ${a.text}`);

await until('the flaky network\'s upstreams answered a probe', () => upstreamView(selector, 'flaky', 'flaky').head !== null && upstreamView(selector, 'flaky', 'steady').head !== null);

for (const mode of ['hang', 'http-500', 'http-429', 'capacity'] as const) {
  t.test(`a primary that ${mode === 'hang' ? 'never answers' : `answers ${mode}`} is routed around; its breaker opens, half-opens and closes once it recovers`, async (t) => {
    const view = (): ReturnType<typeof upstreamView> => upstreamView(selector, 'flaky', 'flaky');
    const before = view().breaker;
    flaky.mode = mode;
    const during = await burst('flaky', 12);
    t.same(problems(during), [], 'every call is answered while the primary misbehaves');
    await until('the breaker opened', () => view().breaker.opened > before.opened);
    t.equal(view().status.healthy, false, 'status: not healthy');
    const open = await burst('flaky', 8);
    t.same(problems(open), [], 'every call is answered while the breaker is open');
    t.ok(open.every((a) => servedBy(a) === 'steady'), 'the open upstream gets no calls');
    await until('a half-open trial failed and the breaker opened again', () => view().breaker.halfOpened > before.halfOpened && view().breaker.opened > before.opened + 1);
    flaky.mode = 'forward';
    await until('the breaker closed again', () => view().breaker.state === 'closed' && view().breaker.closed > before.closed);
    t.equal(view().status.healthy, true, 'status: healthy again');
    const after: RawAnswer[] = [];
    await until('the recovered primary serves again', async () => {
      after.push(...(await burst('flaky', 4, 2)));
      return after.some((a) => servedBy(a) === 'flaky');
    });
    t.same(problems(after), [], 'every call is answered after the recovery');
  });
}

t.test('an upstream\'s quota error never reaches the client as the client\'s own; the call is refunded', async (t) => {
  for (const mode of ['capacity', 'http-429'] as const) {
    quotaOnly.mode = mode;
    const charged = await used();
    const res = await call('quota', 'eth_getBlockByNumber', ['latest', false]);
    t.equal(res.status, 503, `${mode}: HTTP 503, not 429`);
    t.equal((res.json as { error: { code: number } }).error.code, -33503, `${mode}: the network is unavailable, not -32005`);
    t.notMatch(res.text, /limit exceeded|Too Many Requests/i, 'the provider\'s words are not passed on');
    t.ok(Number(res.headers['retry-after']) >= 1, 'Retry-After');
    t.equal(await used(), charged, 'not charged');
  }
});

t.test('answers from the node are returned on the first attempt, never retried', async (t) => {
  const cases: Array<{ what: string; method: string; params: unknown[]; check: (a: RawAnswer) => void }> = [
    {
      what: 'an empty eth_getLogs result',
      method: 'eth_getLogs',
      params: [{ fromBlock: '0x0', toBlock: 'latest', address: `0x${'22'.repeat(20)}` }],
      check: (a) => t.same(resultOf(a), [], 'result []'),
    },
    {
      what: 'a revert',
      method: 'eth_call',
      params: [{ to: seed.contract.address, data: seed.revert.call }, 'latest'],
      check: (a) => t.match((a.json as { error: unknown }).error, { code: 3, message: seed.revert.message, data: seed.revert.data }, 'code 3 with the revert data'),
    },
    {
      what: 'a null result',
      method: 'eth_getTransactionByHash',
      params: [`0x${'00'.repeat(32)}`],
      check: (a) => t.equal(resultOf(a), null, 'result null'),
    },
    {
      what: 'a node\'s not-found error',
      method: 'eth_getUncleByBlockHashAndIndex',
      params: [`0x${'00'.repeat(32)}`, '0x0'],
      check: (a) => t.ok((a.json as { error?: unknown; result?: unknown }).error !== undefined || resultOf(a) === null, 'the node\'s answer'),
    },
  ];
  for (const c of cases) {
    const before = totals('answers');
    const res = await call('answers', c.method, c.params);
    t.equal(res.status, 200, `${c.what}: HTTP 200`);
    c.check(res);
    t.match(servedBy(res), /^(one|two)$/, 'one upstream served it');
    const after = totals('answers');
    t.equal(after.attempts - before.attempts, 1, `${c.what}: one attempt`);
    t.equal(after.retries - before.retries, 0, `${c.what}: no retry`);
    t.equal(after.failures - before.failures, 0, `${c.what}: not counted as a failure`);
  }
});

t.test('eth_sendRawTransaction is attempted once when the upstream dies mid-request', async (t) => {
  const charged = await used();
  const dyingBefore = upstreamView(selector, 'tx', 'dying').counters.attempts;
  const res = await call('tx', 'eth_sendRawTransaction', ['0x02f86b0180843b9aca00850c92a69c0082520894000000000000000000000000000000000000000001808001a0']);
  t.equal(res.status, 503, 'HTTP 503');
  t.equal((res.json as { error: { code: number } }).error.code, -33503);
  t.match((res.json as { error: { message: string } }).error.message, /not sent twice/);
  t.same(dying.received, ['eth_sendRawTransaction'], 'the dying node received it once');
  t.same(witness.received.filter((m) => m === 'eth_sendRawTransaction'), [], 'no other node received it');
  t.equal(upstreamView(selector, 'tx', 'dying').counters.attempts - dyingBefore, 1, 'one attempt');
  t.equal(await used(), charged, 'not charged');

  // The same failure on an idempotent call is retried on the other primary.
  const chainId = await call('tx', 'eth_chainId');
  t.equal(chainId.status, 200);
  t.equal(resultOf(chainId), `0x${steady.chainId.toString(16)}`);
  t.equal(servedBy(chainId), 'witness', 'the retry went to the other primary');
  t.same(dying.received, ['eth_sendRawTransaction', 'eth_chainId'], 'after the first attempt died');
});

t.test('a lagging primary gets no traffic, latest never goes backwards, and its breaker closes once it catches up', async (t) => {
  const view = (): ReturnType<typeof upstreamView> => upstreamView(selector, 'lag', 'lagger');
  await until('both heads are known', () => view().head !== null && upstreamView(selector, 'lag', 'leader').head !== null);
  await leader.rpc('anvil_mine', ['0xa']);
  await until('the lagger is seen lagging', () => view().lagging);
  t.ok((view().lag ?? 0) > 2, `lag ${view().lag} blocks`);
  const heads: number[] = [];
  const record = async (count: number): Promise<RawAnswer[]> => {
    const answers: RawAnswer[] = [];
    for (let i = 0; i < count; i++) {
      const res = await call('lag', 'eth_blockNumber');
      answers.push(res);
      heads.push(Number(resultOf(res)));
    }
    return answers;
  };
  const lagging = await record(10);
  t.ok(lagging.every((a) => servedBy(a) === 'leader'), 'only the leader serves');
  await until('the lagger\'s breaker opened, half-opened and opened again', () => view().breaker.opened >= 2 && view().breaker.halfOpened >= 1);
  await record(5);
  await lagger.rpc('anvil_mine', ['0xa']);
  await until('the lagger\'s breaker closed', () => view().breaker.state === 'closed' && view().breaker.closed >= 1 && !view().lagging);
  const caughtUp: RawAnswer[] = [];
  await until('the lagger serves again', async () => {
    caughtUp.push(...(await record(2)));
    return caughtUp.some((a) => servedBy(a) === 'lagger');
  });
  t.ok(heads.every((h, i) => i === 0 || h >= heads[i - 1]!), `eth_blockNumber never went backwards (${heads[0]} … ${heads.at(-1)})`);
  t.ok(heads.every((h) => h >= 10), 'and never showed the lagging head');
});
