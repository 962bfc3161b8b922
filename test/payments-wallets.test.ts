import 'reflect-metadata';
import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createPublicClient, http, type Address, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { x402Client } from '@x402/core/client';
import { decodePaymentRequiredHeader, decodePaymentResponseHeader, encodePaymentSignatureHeader } from '@x402/core/http';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { wrapFetchWithPayment } from '@x402/fetch';
import { DEVNET_PAYER_ADDRESS, DEVNET_PAYER_KEY, seedDevnet, startAnvil } from '@tollgate/devnet';
import { httpTransport } from '../plugins/http/index.js';
import { evmFamily } from '../plugins/evm/index.js';
import { ledgerSqlite } from '../plugins/ledger-sqlite/index.js';
import { KeyRegistryToken } from '../core/store-api.js';
import { Tokens } from '../core/plugin-api.js';
import { payments, walletKeyOf, WALLET_KEY_HEADER, type PaymentRequired } from '../plugins/payments/index.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';
import { post, rpc } from './helpers/json-rpc.js';

// Wallet customers against a real chain and real HTTP: the devnet's EIP-3009 stablecoin on Anvil, the
// gateway's embedded facilitator sending through the gateway's own network, keys in a SQLite file.

const anvil = await startAnvil();
t.teardown(() => anvil.stop());
const seed = await seedDevnet(anvil.url, { stablecoin: true });
const coin = seed.stablecoin!;
const network = `eip155:${anvil.chainId}` as const;
const chain = { id: anvil.chainId, name: 'anvil', nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 }, rpcUrls: { default: { http: [anvil.url] } } } as const;
const reader = createPublicClient({ chain, transport: http(anvil.url) });
const balanceOf = async (who: Address): Promise<bigint> => reader.readContract({ address: coin.address, abi: coin.artifact.abi as never, functionName: 'balanceOf', args: [who] } as never) as Promise<bigint>;

const settlementKey = generatePrivateKey();
await anvil.rpc('anvil_setBalance', [privateKeyToAccount(settlementKey).address, '0x56bc75e2d63100000']);
const payTo = privateKeyToAccount(generatePrivateKey()).address;
const PRICE = 10_000n; // 0.01 tUSD
const BUNDLE = 1_000;
const KEY_SECRET = 'wallet-key-secret-for-tests-0123456789';
const PLAN = 'wallet';

const dir = mkdtempSync(join(tmpdir(), 'tollgate-wallets-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

const paymentsSettings = {
  offers: { [PLAN]: [{ credits: BUNDLE, price: PRICE.toString(), asset: coin.address, network, payTo, name: coin.name, version: coin.version }] },
  facilitator: { embedded: { network: 'eth', settlementKey } },
  wallets: { plan: PLAN, keySecret: KEY_SECRET },
};
const gw: TestGateway = await startTestGateway(
  {
    networks: [{ name: 'eth', families: ['evm'], upstreams: [{ url: anvil.url }] }],
    // No daily allowance: a wallet key calls on what it bought.
    plans: { [PLAN]: { dailyCredits: 0, creditsPerSecond: 100_000, failover: false } },
    plugins: { 'ledger-sqlite': { path: join(dir, 'tollgate.db') }, payments: paymentsSettings },
  },
  [ledgerSqlite(), httpTransport(), evmFamily(), payments()],
);
t.teardown(() => gw.close());
const registry = gw.gateway.container.resolve(KeyRegistryToken);
const keyless = `${gw.origin}/eth/v3`;

/** The credits a key has left: its balance as the gateway's metering reads it (paid, the day's being 0). */
async function creditsOf(keyId: string): Promise<number> {
  return (await gw.gateway.container.resolve(Tokens.CreditLedger).balance(keyId, 0, new Date())).paidRemaining;
}

function payer(key: Hex = DEVNET_PAYER_KEY): x402Client {
  return x402Client.fromConfig({
    schemes: [{ network, client: new ExactEvmScheme(privateKeyToAccount(key)) }],
    spendControls: { allowedAssets: [{ network, asset: coin.address }] },
  });
}

const call = (url: string, headers: Record<string, string> = {}, body: unknown = rpc('eth_blockNumber')) =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });

const wallet = walletKeyOf(KEY_SECRET, DEVNET_PAYER_ADDRESS);
/** A method's price on the gateway's eth network. */
const price = (method: string): number => gw.gateway.networks.get('eth')!.methods.get(method)!.definition.credits;

t.test('a call without a key gets the wallets plan\'s x402 offer, in the header and in the error\'s data', async (t) => {
  const res = await call(keyless);
  t.equal(res.status, 402, 'not 401: the call can be paid for');
  const header = res.headers.get('payment-required');
  t.ok(header, 'PAYMENT-REQUIRED is sent');
  const offer = decodePaymentRequiredHeader(header!);
  t.same(offer.accepts, [{ scheme: 'exact', network, asset: coin.address, amount: PRICE.toString(), payTo, maxTimeoutSeconds: 300, extra: { name: coin.name, version: coin.version } }]);
  const body = await res.json() as { error: { code: number; data: { x402: PaymentRequired } } };
  t.same(body.error.data.x402, offer, 'the error\'s data carries the same requirements');
  t.equal(await registry.get(wallet.id), undefined, 'no key was made');
});

t.test('@x402/fetch pays the offer; the wallet gets a key bound to its address, with the bundle, and is served', async (t) => {
  const before = { payer: await balanceOf(DEVNET_PAYER_ADDRESS), payTo: await balanceOf(payTo) };
  const paying = wrapFetchWithPayment(fetch, payer());
  const res = await paying(keyless, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(rpc('eth_blockNumber')) });
  t.equal(res.status, 200);
  const body = await res.json() as { result: string };
  t.equal(BigInt(body.result), await reader.getBlockNumber(), 'the call was served by the chain');
  t.equal(res.headers.get(WALLET_KEY_HEADER), wallet.apiKey, 'the key comes back in x-tollgate-key');
  const settlement = decodePaymentResponseHeader(res.headers.get('payment-response')!);
  t.match(settlement, { success: true, payer: DEVNET_PAYER_ADDRESS, network });
  t.equal((await reader.getTransactionReceipt({ hash: settlement.transaction as Hex })).status, 'success');
  t.equal(await balanceOf(DEVNET_PAYER_ADDRESS), before.payer - PRICE, 'the payer paid the price once');
  t.equal(await balanceOf(payTo), before.payTo + PRICE, 'payTo received it once');
  const stored = await registry.get(wallet.id);
  t.match(stored, { id: `x402-${DEVNET_PAYER_ADDRESS.toLowerCase().slice(2)}`, plan: PLAN, settings: { payments: { wallet: DEVNET_PAYER_ADDRESS.toLowerCase() } } });
  t.equal(await creditsOf(wallet.id), BUNDLE - price('eth_blockNumber'), 'the key holds the bundle less the call it paid with');

  // The next calls use the key and the credits bought.
  for (let i = 0; i < 3; i++) {
    const next = await post(gw.url('eth', wallet.apiKey), rpc('eth_chainId'));
    t.equal(next.status, 200);
    t.same(next.json, { jsonrpc: '2.0', id: 1, result: `0x${anvil.chainId.toString(16)}` });
  }
  t.equal(await creditsOf(wallet.id), BUNDLE - price('eth_blockNumber') - 3 * price('eth_chainId'), 'the calls with the key spend the bought credits');
});

t.test('a wallet that pays again without its key gets the same key back, credited once more; never a second key', async (t) => {
  const left = await creditsOf(wallet.id);
  const paidBefore = await balanceOf(payTo);
  const res = await wrapFetchWithPayment(fetch, payer())(keyless, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(rpc('eth_chainId')) });
  t.equal(res.status, 200);
  t.equal(res.headers.get(WALLET_KEY_HEADER), wallet.apiKey, 'the same key');
  t.equal(await balanceOf(payTo), paidBefore + PRICE);
  t.equal(await creditsOf(wallet.id), left + BUNDLE - price('eth_chainId'), 'the bundle went to the same key, less the call');
  const keys = (await registry.list()).filter((k) => (k.settings as { payments?: { wallet?: string } } | undefined)?.payments?.wallet === DEVNET_PAYER_ADDRESS.toLowerCase());
  t.equal(keys.length, 1, 'one key for the wallet');
});

t.test('a replayed payment header without a key is refused and reveals no key; a bad one makes no key', async (t) => {
  const offer = decodePaymentRequiredHeader((await call(keyless)).headers.get('payment-required')!);
  const payload = await payer().createPaymentPayload(offer);
  const header = encodePaymentSignatureHeader(payload);
  const first = await call(keyless, { 'payment-signature': header });
  t.equal(first.status, 200);
  const credits = await creditsOf(wallet.id);
  const paid = await balanceOf(payTo);
  const replay = await call(keyless, { 'payment-signature': header });
  t.equal(replay.status, 402);
  t.equal(replay.headers.get(WALLET_KEY_HEADER), null, 'a replay does not get the key');
  t.ok(replay.headers.get('payment-required'), 'and is offered the bundles again');
  t.match(await replay.json(), { error: { data: { code: 'PAYMENT_ALREADY_USED' } } });
  t.equal(await creditsOf(wallet.id), credits, 'nothing credited');
  t.equal(await balanceOf(payTo), paid, 'nothing moved');

  // Another wallet, with a forged signature: refused, and it gets no key.
  const stranger = privateKeyToAccount(generatePrivateKey());
  const forged = await payer(generatePrivateKey()).createPaymentPayload(offer);
  const auth = (forged.payload as { authorization: Record<string, unknown> }).authorization;
  const bad = await call(keyless, { 'payment-signature': encodePaymentSignatureHeader({ ...forged, payload: { ...forged.payload, authorization: { ...auth, from: stranger.address } } }) });
  t.equal(bad.status, 402);
  t.match(await bad.json(), { error: { data: { code: 'PAYMENT_INVALID' } } });
  t.equal(await registry.get(walletKeyOf(KEY_SECRET, stranger.address).id), undefined, 'no key for a payment that did not settle');
});

t.test('a batch without a key pays once for all its calls', async (t) => {
  const fresh = generatePrivateKey();
  const from = privateKeyToAccount(fresh).address;
  // Fund a second wallet from the demo payer's balance: a transfer by the minter is not needed.
  await anvil.rpc('anvil_impersonateAccount', [DEVNET_PAYER_ADDRESS]);
  await anvil.rpc('anvil_setBalance', [DEVNET_PAYER_ADDRESS, '0x56bc75e2d63100000']);
  const transfer = `0xa9059cbb${from.slice(2).toLowerCase().padStart(64, '0')}${(PRICE * 10n).toString(16).padStart(64, '0')}`;
  const hash = await anvil.rpc<Hex>('eth_sendTransaction', [{ from: DEVNET_PAYER_ADDRESS, to: coin.address, data: transfer }]);
  await reader.waitForTransactionReceipt({ hash });
  await anvil.rpc('anvil_stopImpersonatingAccount', [DEVNET_PAYER_ADDRESS]);
  t.equal(await balanceOf(from), PRICE * 10n);

  const paid = await balanceOf(payTo);
  const batch = [rpc('eth_chainId', [], 1), rpc('eth_blockNumber', [], 2), rpc('eth_chainId', [], 3)];
  const res = await wrapFetchWithPayment(fetch, payer(fresh))(keyless, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(batch) });
  t.equal(res.status, 200);
  const answers = await res.json() as Array<{ id: number; result?: string; error?: unknown }>;
  t.same(answers.map((a) => [a.id, a.error]), [[1, undefined], [2, undefined], [3, undefined]], 'every call of the batch is served');
  t.equal(res.headers.get(WALLET_KEY_HEADER), walletKeyOf(KEY_SECRET, from).apiKey);
  t.equal(await balanceOf(payTo), paid + PRICE, 'one payment for the batch');
  t.equal(await balanceOf(from), PRICE * 9n);
});

t.test('settings that cannot work are refused at start, with why: wallets without a key registry, a facilitator network not served', async (t) => {
  await t.rejects(
    startTestGateway(
      { networks: [{ name: 'eth', families: ['evm'], upstreams: [{ url: anvil.url }] }], plans: { [PLAN]: { dailyCredits: 0, creditsPerSecond: 1_000, failover: false } }, plugins: { payments: paymentsSettings } },
      [httpTransport(), evmFamily(), payments()],
    ),
    /payments: wallets needs a store that keeps keys/,
  );
  await t.rejects(
    startTestGateway(
      { networks: [{ name: 'mainnet', families: ['evm'], upstreams: [{ url: anvil.url }] }], plans: { [PLAN]: { dailyCredits: 0, creditsPerSecond: 1_000, failover: false } }, plugins: { 'ledger-sqlite': { path: ':memory:' }, payments: paymentsSettings } },
      [ledgerSqlite(), httpTransport(), evmFamily(), payments()],
    ),
    /payments: facilitator\.embedded\.network "eth" is not a network of the config/,
    'a facilitator sending through a network the gateway does not serve is refused too',
  );
  t.throws(
    () => payments({ ...paymentsSettings, wallets: { plan: 'other', keySecret: KEY_SECRET } }).register({ register() {} } as never, { plugins: {} } as never),
    /wallets\.plan: plan "other" sells no bundle/,
  );
  t.throws(
    () => payments({ ...paymentsSettings, wallets: { plan: PLAN, keySecret: 'short' } }).register({ register() {} } as never, { plugins: {} } as never),
    /wallets\.keySecret: must be a secret of at least 32 characters/,
  );
});
