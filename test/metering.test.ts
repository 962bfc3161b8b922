/**
 * The metering port's default: the key's bucket, then its balance, one charge that refunds itself once.
 * The meter stage charges through whatever `MeteringToken` holds, and nothing else.
 */
import t from 'tap';
import { Tokens, type TollgatePlugin } from '../core/plugin-api.js';
import { LimiterLedgerMetering, MemoryCreditLedger, MemoryRateLimiter, MeteringToken, type Charge, type CreditLedger, type DebitReceipt, type Metering, type RateLimiter } from '../core/store-api.js';
import { httpTransport } from '../plugins/http/index.js';
import { evmFamily } from '../plugins/evm/index.js';
import { ManualClock, startTestGateway } from './helpers/gateway.js';
import { post, rpc } from './helpers/json-rpc.js';
import { startTinyUpstream } from './helpers/tiny-upstream.js';

const NOW = Date.UTC(2026, 10, 22, 12);
const PLAN = { dailyCredits: 200, creditsPerSecond: 100 };

/** Memory stores that count what is asked of them. */
function counted(): { limiter: RateLimiter; ledger: CreditLedger; calls: string[] } {
  const calls: string[] = [];
  const limiter = new MemoryRateLimiter();
  const ledger = new MemoryCreditLedger();
  return {
    calls,
    limiter: { take: (bucket, ...rest) => (calls.push(`take ${bucket}`), limiter.take(bucket, ...rest)) },
    ledger: {
      debit: (keyId, ...rest) => (calls.push(`debit ${keyId}`), ledger.debit(keyId, ...rest)),
      refund: (receipt: DebitReceipt) => (calls.push(`refund ${receipt.id}`), ledger.refund(receipt)),
      balance: (...args) => ledger.balance(...args),
      topUp: (...args) => ledger.topUp(...args),
    },
  };
}

t.test('the default takes the bucket (named by the key id), then debits; memory stores answer synchronously', async (t) => {
  const { limiter, ledger, calls } = counted();
  const metering = new LimiterLedgerMetering(limiter, ledger);
  const charge = metering.charge('k', 80, PLAN, NOW) as Charge;
  t.notOk(charge instanceof Promise, 'no promise when the stores answer synchronously');
  t.match(charge, { ok: true, receipt: { id: String, keyId: 'k', day: '2026-11-22', credits: 80 }, remaining: 120 });
  t.same(calls, ['take k', 'debit k'], 'bucket first, then the balance');
  t.equal((await ledger.balance('k', 200, new Date(NOW))).used, 80);
});

t.test('a refusal says why with the meter stage\'s codes, and a throttled charge never reaches the balance', async (t) => {
  const { limiter, ledger, calls } = counted();
  const metering = new LimiterLedgerMetering(limiter, ledger);
  t.match(metering.charge('k', 100, PLAN, NOW), { ok: true });
  calls.length = 0;
  t.same(metering.charge('k', 50, PLAN, NOW), { ok: false, code: 'RATE_LIMITED', retryAfterMs: 500 }, 'the bucket is empty: half a second until 50 tokens are back');
  t.same(calls, ['take k'], 'no debit after a throttled take');
  t.same(metering.charge('k', 150, PLAN, NOW + 1000), { ok: false, code: 'CREDITS_EXHAUSTED', remaining: 100, paidRemaining: 0, resetsAt: new Date('2026-11-23T00:00:00.000Z') });
  t.equal((await ledger.balance('k', 200, new Date(NOW))).used, 100, 'nothing spent by the refusals');
});

t.test('without creditsPerSecond no bucket is taken (events): only the debit', async (t) => {
  const { limiter, ledger, calls } = counted();
  const metering = new LimiterLedgerMetering(limiter, ledger);
  for (let i = 0; i < 3; i++) t.match(metering.charge('k', 60, { dailyCredits: 200 }, NOW), { ok: true }, 'never throttled');
  t.same(calls, ['debit k', 'debit k', 'debit k']);
  t.match(metering.charge('k', 60, { dailyCredits: 200 }, NOW), { ok: false, code: 'CREDITS_EXHAUSTED', remaining: 20 });
});

t.test('a charge refunds itself exactly once, however often asked', async (t) => {
  const { limiter, ledger, calls } = counted();
  const metering = new LimiterLedgerMetering(limiter, ledger);
  const charge = metering.charge('k', 80, PLAN, NOW) as Charge;
  if (!charge.ok) throw new Error('expected a charge');
  t.equal(charge.refund(), undefined, 'a synchronous ledger refunds synchronously');
  t.equal(charge.refund(), undefined);
  await charge.refund();
  t.same(calls.filter((c) => c.startsWith('refund')), [`refund ${charge.receipt.id}`], 'one refund reached the ledger');
  t.equal((await ledger.balance('k', 200, new Date(NOW))).used, 0);
});

t.test('a refund that throws rejects, once, and is not tried again', async (t) => {
  let refunds = 0;
  const ledger: CreditLedger = {
    debit: (keyId, credits, _limit, now) => ({ ok: true, receipt: { id: 'd1', keyId, day: '2026-11-22', credits, paid: 0 }, remaining: 0, paidRemaining: 0 }),
    refund: () => { refunds++; throw new Error('store down'); },
    balance: () => { throw new Error('unused'); },
    topUp: () => { throw new Error('unused'); },
  };
  const charge = new LimiterLedgerMetering(new MemoryRateLimiter(), ledger).charge('k', 1, PLAN, NOW) as Charge;
  if (!charge.ok) throw new Error('expected a charge');
  await t.rejects(async () => charge.refund(), /store down/);
  await t.rejects(async () => charge.refund(), /store down/, 'the second settles with the first');
  t.equal(refunds, 1);
});

t.test('the meter stage charges through MeteringToken: the metering registered is the one asked, once per call', async (t) => {
  const upstream = await startTinyUpstream();
  t.teardown(() => upstream.close());
  const asked: [string, number, number, number | undefined, number][] = [];
  const ledger = new MemoryCreditLedger();
  const inner: Metering = new LimiterLedgerMetering(new MemoryRateLimiter(), ledger);
  const plugin: TollgatePlugin = {
    name: 'recording-metering',
    register(container) {
      container.register(MeteringToken, {
        useValue: { charge: (keyId, credits, limits, now) => (asked.push([keyId, credits, limits.dailyCredits, limits.creditsPerSecond, now]), inner.charge(keyId, credits, limits, now)) },
      });
      // A ledger and limiter that must not be used by `meter`: charging is the metering's job alone.
      container.register(Tokens.CreditLedger, { useValue: { debit: () => { throw new Error('debited apart'); }, refund: () => { throw new Error('refunded apart'); }, balance: (...args) => ledger.balance(...args), topUp: (...args) => ledger.topUp(...args) } satisfies CreditLedger });
      container.register(Tokens.RateLimiter, { useValue: { take: () => { throw new Error('taken apart'); } } });
    },
  };
  const clock = new ManualClock(NOW);
  const gw = await startTestGateway(
    {
      plans: { small: { dailyCredits: 100, creditsPerSecond: 1000, failover: false } },
      keys: [{ key: 'metering-port-key-0001', id: 'mk', plan: 'small' }],
      networks: [{ name: 'eth', families: ['evm'], upstreams: [{ url: upstream.url }] }],
    },
    [httpTransport(), evmFamily(), plugin],
    { clock },
  );
  t.teardown(() => gw.close());
  const url = gw.url('eth', 'metering-port-key-0001');
  t.equal((await post(url, rpc('eth_blockNumber', []))).status, 200);
  t.same(asked, [['mk', 80, 100, 1000, NOW]], 'one charge: key id, credits, the plan\'s limits, the gateway\'s clock');
  const refused = await post(url, rpc('eth_blockNumber', []));
  t.equal(refused.status, 402, 'the second 80 credits do not fit: CREDITS_EXHAUSTED');
  t.match(refused.json, { error: { code: -33000, data: { dailyCredits: 100, remaining: 20, cost: 80 } } });
  t.equal((await ledger.balance('mk', 100, new Date(NOW))).used, 80);
});
