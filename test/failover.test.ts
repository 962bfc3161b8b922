import t from 'tap';
import { Tokens } from '../core/plugin-api.js';
import { type CreditLedger } from '../core/store-api.js';
import type { FailoverSelector } from '../core/upstream/failover-selector.js';
import { httpTransport } from '../plugins/http/index.js';
import { evmFamily } from '../plugins/evm/index.js';
import { startAnvil, type AnvilInstance } from '@tollgate/devnet';
import { startTestGateway } from './helpers/gateway.js';
import { post, rpc, type RawAnswer } from './helpers/json-rpc.js';
import { until, upstreamView } from './helpers/failover-upstreams.js';

// Two Anvil primaries and an Anvil partner, real processes, behind a gateway with fast health timings.
// The same genesis timestamp gives the three chains the same genesis block, as nodes of one network have.
const GENESIS = { args: ['--timestamp', '1700000000'] };
const anvils = await Promise.all([startAnvil(GENESIS), startAnvil(GENESIS), startAnvil(GENESIS)]);
t.teardown(() => Promise.all(anvils.map((a) => a.stop())));
const [primaryA, primaryB, partner] = anvils as [AnvilInstance, AnvilInstance, AnvilInstance];

const ELIGIBLE_KEY = 'failover-growth-key-01';
const PLAIN_KEY = 'failover-plain-key-001';
const gw = await startTestGateway(
  {
    plans: {
      // Throughput is not what this file tests: plans that never throttle, with and without failover.
      big: { dailyCredits: 1e12, creditsPerSecond: 1e9, failover: true },
      small: { dailyCredits: 1e12, creditsPerSecond: 1e9, failover: false },
    },
    keys: [
      { key: ELIGIBLE_KEY, id: 'eligible', plan: 'big' },
      { key: PLAIN_KEY, id: 'plain', plan: 'small' },
    ],
    networks: [
      {
        name: 'eth',
        families: ['evm'],
        upstreams: [
          { name: 'a', url: primaryA.url },
          { name: 'b', url: primaryB.url },
          { name: 'partner', url: partner.url, role: 'partner' },
        ],
      },
    ],
    upstreamDefaults: { timeoutMs: 5_000, connectTimeoutMs: 2_000 },
    failover: { breaker: { failureThreshold: 3, cooldownMs: 60_000 }, probe: { intervalMs: 100, timeoutMs: 1_000 } },
  },
  [httpTransport(), evmFamily()],
);
t.teardown(() => gw.close());

const selector = gw.gateway.container.resolve(Tokens.UpstreamSelector) as FailoverSelector;
const ledger = gw.gateway.container.resolve<CreditLedger>(Tokens.CreditLedger);
const used = async (keyId: string): Promise<number> => (await ledger.balance(keyId, 1e12, new Date(gw.gateway.clock.now()))).used;
const view = (name: string): ReturnType<typeof upstreamView> => upstreamView(selector, 'eth', name);
const ZERO_HASH = `0x${'00'.repeat(32)}`;
const genesis = (await primaryA.rpc<{ hash: string }>('eth_getBlockByNumber', ['0x0', false])).hash;

interface Outcome {
  readonly method: string;
  readonly key: string;
  readonly answer: RawAnswer;
}

/** A steady load: `workers` clients, each sending `next()`'s call in a loop until `stop()`. */
function steadyLoad(workers: number, next: (i: number) => { method: string; params: unknown[]; key: string }): { outcomes: Outcome[]; stop(): Promise<void> } {
  const outcomes: Outcome[] = [];
  let running = true;
  let n = 0;
  const loops = Array.from({ length: workers }, async () => {
    while (running) {
      const call = next(n++);
      const answer = await post(gw.url('eth', call.key), rpc(call.method, call.params, n));
      outcomes.push({ method: call.method, key: call.key, answer });
    }
  });
  return {
    outcomes,
    async stop() {
      running = false;
      await Promise.all(loops);
    },
  };
}

const isAnswer = (o: Outcome): boolean => o.answer.status === 200 && (o.answer.json as { result?: unknown }).result !== undefined;
const servedBy = (o: Outcome): string => String(o.answer.headers['x-tollgate-upstream'] ?? '');

await until('both primaries report a head', () => view('a').head !== null && view('b').head !== null);

t.test('SIGKILL of one primary under a steady load: no client sees an error', async (t) => {
  const load = steadyLoad(6, (i) => ({ method: i % 2 === 0 ? 'eth_getBlockByNumber' : 'eth_chainId', params: i % 2 === 0 ? ['latest', false] : [], key: i % 3 === 0 ? PLAIN_KEY : ELIGIBLE_KEY }));
  await until('both primaries served calls', () => load.outcomes.some((o) => servedBy(o) === 'a') && load.outcomes.some((o) => servedBy(o) === 'b'));
  const before = load.outcomes.length;
  primaryA.process.kill('SIGKILL');
  await until('primary a\'s breaker opened', () => view('a').breaker.state === 'open');
  const opened = load.outcomes.length;
  await until('more calls were served after the breaker opened', () => load.outcomes.length > opened + 50);
  await load.stop();

  const failed = load.outcomes.filter((o) => !isAnswer(o));
  t.same(failed.map((o) => `${o.answer.status} ${o.answer.text}`), [], 'every call was answered with a result');
  t.ok(load.outcomes.length - before > 50, `calls kept flowing after the kill (${load.outcomes.length - before})`);
  t.ok(load.outcomes.slice(opened).every((o) => servedBy(o) === 'b'), 'after the breaker opened, b served everything');
  t.ok(load.outcomes.every((o) => servedBy(o) !== 'partner'), 'the partner was never needed while a primary could serve');
  t.equal(view('partner').counters.attempts, 0);
  t.equal(view('a').status.healthy, false);
  t.ok(view('a').breaker.opened >= 1, 'the opening is counted');
});

t.test('SIGKILL of both primaries: eligible calls go to the partner, the rest get 503, unserved calls are refunded', async (t) => {
  const eligibleBefore = await used('eligible');
  const plainBefore = await used('plain');
  // Eligible calls (eth_getUncleByBlockHashAndIndex on a failover plan) keep flowing while b is killed.
  t.equal((await partner.rpc<{ hash: string }>('eth_getBlockByNumber', ['0x0', false])).hash, genesis, 'the partner has the same genesis block');
  const load = steadyLoad(4, () => ({ method: 'eth_getUncleByBlockHashAndIndex', params: [genesis, '0x0'], key: ELIGIBLE_KEY }));
  await until('b serves the eligible load', () => load.outcomes.some((o) => servedBy(o) === 'b'));
  const killedAt = load.outcomes.length;
  primaryB.process.kill('SIGKILL');
  await until('the partner serves', () => load.outcomes.some((o) => servedBy(o) === 'partner'));
  await until('primary b\'s breaker opened', () => view('b').breaker.state === 'open');
  const opened = load.outcomes.length;
  await until('more eligible calls were served', () => load.outcomes.length > opened + 30);
  await load.stop();

  const failed = load.outcomes.filter((o) => !isAnswer(o));
  t.same(failed.map((o) => `${o.answer.status} ${o.answer.text}`), [], 'no eligible call saw an error');
  t.ok(load.outcomes.slice(killedAt).some((o) => servedBy(o) === 'partner'), 'the partner served after the kill');
  t.ok(load.outcomes.slice(opened).every((o) => servedBy(o) === 'partner'), 'with both breakers open only the partner serves');
  t.ok(view('partner').counters.failovers > 0, 'failovers are counted on the partner');

  // Everything else is refused with the documented error, before any upstream is asked.
  const ineligible = [
    { key: ELIGIBLE_KEY, method: 'eth_getBlockByNumber', params: ['latest', false] }, // method not eligible
    { key: PLAIN_KEY, method: 'eth_getUncleByBlockHashAndIndex', params: [ZERO_HASH, '0x0'] }, // plan not eligible
    { key: PLAIN_KEY, method: 'eth_chainId', params: [] },
  ];
  const partnerAttempts = view('partner').counters.attempts;
  for (const call of ineligible) {
    const res = await post(gw.url('eth', call.key), rpc(call.method, call.params));
    t.equal(res.status, 503, `${call.method} with ${call.key === PLAIN_KEY ? 'a plan without failover' : 'a failover plan'}: HTTP 503`);
    t.equal((res.json as { error: { code: number } }).error.code, -33503, 'code -33503');
    t.match((res.json as { error: { message: string } }).error.message, /network eth is unavailable/);
    t.ok(Number(res.headers['retry-after']) >= 1, `Retry-After ${String(res.headers['retry-after'])}`);
    t.notOk(res.headers['x-tollgate-upstream'], 'no upstream served it');
  }
  t.equal(view('partner').counters.attempts, partnerAttempts, 'ineligible calls never reach the partner');

  // Credits: the eligible key paid exactly for the calls it got answers to; the plain key paid nothing.
  const served = load.outcomes.filter(isAnswer).length;
  t.equal((await used('eligible')) - eligibleBefore, served * 150, `charged ${served} × 150 for the served calls, nothing for the 503`);
  t.equal((await used('plain')) - plainBefore, 0, 'the refused calls were refunded');
  const status = selector.status().filter((s) => s.network === 'eth');
  t.same(status.map((s) => [s.name, s.healthy]), [['a', false], ['b', false], ['partner', true]], 'status shows who can serve');
  t.doesNotThrow(() => JSON.stringify(status), 'status is JSON-serialisable');
});
