import t from 'tap';
import { startAnvil } from '@tollgate/devnet';
import { Tokens } from '../core/plugin-api.js';
import type { FailoverSelector } from '../core/upstream/failover-selector.js';
import { httpTransport } from '../plugins/http/index.js';
import { evmFamily } from '../plugins/evm/index.js';
import { startTestGateway } from './helpers/gateway.js';
import { startCountingRelay } from './helpers/counting-relay.js';
import { post, rpc, type RawAnswer } from './helpers/json-rpc.js';
import { startChaosUpstream, until, upstreamView } from './helpers/failover-upstreams.js';

// A primary that is down (a chaos server answering 500, behind a counting relay so a test sees which
// calls tried it) and a paid partner with a daily budget in front of
// an Anvil node: the partner node (a chaos server that fails on demand, forwarding to Anvil) sits behind a
// counting relay, which counts what reached the partner and can hold requests in flight.
const anvil = await startAnvil({ args: ['--timestamp', '1700000000'] });
t.teardown(() => anvil.stop());
const partnerNode = await startChaosUpstream(anvil.url, 'http-500');
t.teardown(() => partnerNode.close());
const partner = await startCountingRelay(partnerNode.url);
t.teardown(() => partner.close());

const primaryNode = await startChaosUpstream(anvil.url, 'http-500');
t.teardown(() => primaryNode.close());
const primary = await startCountingRelay(primaryNode.url);
t.teardown(() => primary.close());

const spentNode = await startChaosUpstream(anvil.url, 'http-500');
t.teardown(() => spentNode.close());
const spentPartner = await startCountingRelay(spentNode.url);
t.teardown(() => spentPartner.close());

const KEY = 'partner-budget-key-01';
const CHAIN_ID_CREDITS = 5;
const BUDGET_CALLS = 10;
const CONCURRENT = 6;
const COOLDOWN_MS = 200;
const gw = await startTestGateway(
  {
    plans: { rich: { dailyCredits: 1e12, creditsPerSecond: 1e9, failover: true } },
    keys: [{ key: KEY, id: 'rich', plan: 'rich' }],
    networks: [
      {
        name: 'eth',
        families: ['evm'],
        upstreams: [
          { name: 'primary', url: primary.url },
          { name: 'partner', url: partner.url, role: 'partner', budget: { dailyCredits: BUDGET_CALLS * CHAIN_ID_CREDITS } },
        ],
        failover: { probe: { intervalMs: 0 }, methods: ['eth_chainId'], plans: ['rich'], breaker: { failureThreshold: 1, cooldownMs: COOLDOWN_MS } },
      },
      {
        name: 'spent',
        families: ['evm'],
        upstreams: [
          { name: 'spent-partner', url: spentPartner.url, role: 'partner', budget: { dailyCredits: CHAIN_ID_CREDITS } },
        ],
        failover: { probe: { intervalMs: 0 }, methods: ['eth_chainId'], plans: ['rich'], breaker: { failureThreshold: 1, cooldownMs: COOLDOWN_MS } },
      },
    ],
    upstreamDefaults: { timeoutMs: 10_000 },
  },
  [httpTransport(), evmFamily()],
);
t.teardown(() => gw.close());
const selector = gw.gateway.container.resolve(Tokens.UpstreamSelector) as FailoverSelector;
const view = (name: string): ReturnType<typeof upstreamView> => upstreamView(selector, 'eth', name);
const chainId = (): Promise<RawAnswer> => post(gw.url('eth', KEY), rpc('eth_chainId', []));
const chainIdOn = (network: string): Promise<RawAnswer> => post(gw.url(network, KEY), rpc('eth_chainId', []));
const spentView = (): ReturnType<typeof upstreamView> => upstreamView(selector, 'spent', 'spent-partner');
const errorOf = (a: RawAnswer): { code: number; message: string } | undefined => (a.json as { error?: { code: number; message: string } }).error;

t.test('during a primary outage, a half-open partner\'s budget pays only for the calls the partner received', async (t) => {
  const failed = await chainId();
  t.equal(failed.status, 503, 'primary down, partner failing: no answer');
  t.equal(view('partner').breaker.state, 'open', 'the partner\'s breaker opened');
  t.equal(partner.count('eth_chainId'), 1, 'the partner received that call (its budget paid for it)');

  // The partner recovers; once its cooldown is over, the next call that reaches it is its one trial.
  partnerNode.mode = 'forward';
  await until('the partner\'s cooldown is over', () => {
    const ago = (view('partner').status.details as { breaker: { openedMsAgo: number | null } }).breaker.openedMsAgo;
    return ago !== null && ago > COOLDOWN_MS;
  });
  partner.hold();
  const calls = Array.from({ length: CONCURRENT }, () => chainId());
  await until('the trial call reached the partner', () => partner.held === 1);
  const settled: RawAnswer[] = [];
  const others = calls.map((c) => c.then((a) => (settled.push(a), a)));
  await until(`the ${CONCURRENT - 1} other calls were refused`, () => settled.length === CONCURRENT - 1);
  t.ok(settled.every((a) => a.status === 503), 'the calls that were not the trial got no node: the partner is half-open');
  t.notOk(settled.some((a) => /over its own budget/.test(errorOf(a)?.message ?? '')), 'none was refused for the partner\'s budget');
  partner.release();
  const answers = await Promise.all(others);
  t.equal(answers.filter((a) => a.status === 200).length, 1, 'the trial was answered');
  t.equal(partner.count('eth_chainId'), 2, 'the partner received the failed call and the trial, nothing else');
  t.equal(view('partner').breaker.state, 'closed', 'the trial closed the partner\'s breaker');

  // What is left of the budget shows what was charged: every call it allows reaches the partner.
  // The primary's breaker (200 ms cooldown) may let a trial through between these calls on a slow
  // machine: a refused call that also tried the primary reports that failure, so each refusal is
  // checked against whether the primary received it.
  const after: RawAnswer[] = [];
  const triedPrimary: boolean[] = [];
  for (let i = 0; i < BUDGET_CALLS + 3; i++) {
    const before = primary.requests;
    after.push(await chainId());
    triedPrimary.push(primary.requests > before);
  }
  t.equal(after.filter((a) => a.status === 200).length, BUDGET_CALLS - 2, 'the budget had room for all but the two calls the partner received');
  t.equal(partner.count('eth_chainId'), BUDGET_CALLS, `the partner received exactly its budget of ${BUDGET_CALLS} calls`);
  const refused = after.flatMap((a, i) => (a.status !== 200 ? [{ answer: a, triedPrimary: triedPrimary[i]! }] : []));
  t.equal(refused.length, 5);
  const overBudget = refused.filter((r) => !r.triedPrimary);
  t.ok(overBudget.length > 0, 'some refused calls tried no node at all');
  for (const r of overBudget) t.match(errorOf(r.answer), { code: -33503, message: 'every upstream of eth that could serve the call is over its own budget' });
  for (const r of refused.filter((x) => x.triedPrimary)) t.match(errorOf(r.answer), { code: -33503, message: 'network eth is unavailable' });
});

t.test('a budget that refuses the call holding a half-open trial gives the trial back', async (t) => {
  const spent = await chainIdOn('spent');
  t.equal(spent.status, 503, 'the partner failing: no answer, and its one call of the day is spent');
  t.equal(spentPartner.count('eth_chainId'), 1);
  t.equal(spentView().breaker.state, 'open');
  await until('the partner\'s cooldown is over', () => {
    const ago = (spentView().status.details as { breaker: { openedMsAgo: number | null } }).breaker.openedMsAgo;
    return ago !== null && ago > COOLDOWN_MS;
  });
  // Each call in turn is admitted to the half-open partner as its trial, then refused by its budget: the
  // trial is given back at once, so the next call gets the same verdict rather than a trial still held.
  for (let i = 0; i < 3; i++) {
    const answer = await chainIdOn('spent');
    t.match(errorOf(answer), { code: -33503, message: 'every upstream of spent that could serve the call is over its own budget' }, `call ${i + 1}: over the partner's budget`);
  }
  t.equal(spentPartner.count('eth_chainId'), 1, 'the partner received nothing more');
  t.equal(spentView().counters.attempts, 1, 'the selector counts only the attempt that was sent');
  t.equal(spentView().breaker.state, 'half-open', 'the partner waits for a trial that is sent');
});
