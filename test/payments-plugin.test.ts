import 'reflect-metadata';
import t from 'tap';
import { httpTransport } from '../plugins/http/index.js';
import { evmFamily } from '../plugins/evm/index.js';
import { Tokens } from '../core/plugin-api.js';
import { MemoryPaymentJournal, PaymentDeskToken, payments, paymentIdOf } from '../plugins/payments/index.js';
import { startTestGateway } from './helpers/gateway.js';

// The plugin in a gateway: its settings from the config, its desk in the container, recover() on start.

const ASSET = '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913';
const PAY_TO = `0x${'ab'.repeat(20)}`;
const OFFER = { credits: 5_000, price: '1000000', asset: ASSET, network: 'eip155:8453', payTo: PAY_TO, name: 'USD Coin', version: '2' };
const NETWORKS = [{ name: 'eth', families: ['evm'], upstreams: [{ url: 'http://127.0.0.1:9' }] }];

t.test('on start the desk credits what the journal holds as settled, once, into the gateway\'s ledger; the container holds the desk', async (t) => {
  const journal = new MemoryPaymentJournal();
  const id = paymentIdOf('eip155:8453', ASSET, `0x${'cd'.repeat(20)}`, `0x${'01'.repeat(32)}`);
  await journal.record({ id, keyId: 'acme', plan: 'pro', credits: 5_000, payer: `0x${'cd'.repeat(20)}`, network: 'eip155:8453', asset: ASSET, amount: '1000000', payTo: PAY_TO, transaction: `0x${'ef'.repeat(32)}`, settledAt: 1 });
  const plugin = payments({ journal });
  const gw = await startTestGateway(
    { networks: NETWORKS, plugins: { payments: { offers: { pro: [OFFER] }, facilitator: { url: { url: 'https://facilitator.example' } } } } },
    [httpTransport(), evmFamily(), plugin],
  );
  t.teardown(() => gw.close());
  t.equal(gw.gateway.container.resolve(PaymentDeskToken), plugin.desk);
  // No PaidCredits given: the bundle is in the gateway's own credit ledger, as the key's paid balance.
  const ledger = gw.gateway.container.resolve(Tokens.CreditLedger);
  t.equal((await ledger.balance('acme', 100, new Date(gw.gateway.clock.now()))).paidRemaining, 5_000);
  t.same(await plugin.desk.recover(), { credited: 0, failed: 0, pending: 0 }, 'nothing left to credit');
  t.equal(await ledger.topUp('acme', 5_000, id), false, 'the payment id is the top-up id: applied once');
  t.match(await journal.get(id), { state: 'credited' });
  t.same(plugin.desk.offers.paymentRequired('pro', { url: 'https://gw.example/eth' })?.accepts, [
    { scheme: 'exact', network: 'eip155:8453', asset: ASSET, amount: '1000000', payTo: PAY_TO, maxTimeoutSeconds: 300, extra: { name: 'USD Coin', version: '2' } },
  ]);
  t.equal(plugin.desk.offers.paymentRequired('free', { url: 'https://gw.example/eth' }), undefined);
});

t.test('bad settings stop the gateway with the field named', async (t) => {
  await t.rejects(
    startTestGateway({ networks: NETWORKS, plugins: { payments: { offers: { pro: [{ ...OFFER, payTo: 'me' }] } } } }, [httpTransport(), evmFamily(), payments()]),
    /plugins\.payments\.facilitator: needs a facilitator[\s\S]*plugins\.payments\.offers\.pro\[0\]\.payTo: must be a 20-byte hex address/,
  );
  t.throws(() => payments().desk, /not started/);
});
