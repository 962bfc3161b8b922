import 'reflect-metadata';
import t, { type Test } from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import WebSocket from 'ws';
import { createPublicClient, http, type Address, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { x402Client } from '@x402/core/client';
import { decodePaymentRequiredHeader, decodePaymentResponseHeader, encodePaymentSignatureHeader } from '@x402/core/http';
import { ExactEvmScheme as ExactEvmClientScheme } from '@x402/evm/exact/client';
import { DEVNET_PAYER_ADDRESS, DEVNET_PAYER_KEY, seedDevnet, startAnvil } from '@tollgate/devnet';
import { Errors, Tokens, type TollgatePlugin } from '../core/plugin-api.js';
import type { CreditLedger } from '../core/store-api.js';
import { httpTransport } from '../plugins/http/index.js';
import { wsTransport } from '../plugins/ws/index.js';
import { evmFamily } from '../plugins/evm/index.js';
import { ledgerSqlite } from '../plugins/ledger-sqlite/index.js';
import { SqlitePaymentJournal, payments, requirementsOf, resolvePaymentsSettings, type PaymentPayload, type PaymentRequired, type PaymentRequirements } from '../plugins/payments/index.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';
import { post, rpc, type RawAnswer } from './helpers/json-rpc.js';
import { startCountingRelay } from './helpers/counting-relay.js';
import { closedPort } from './helpers/closed-port.js';

// The 402 as an x402 offer and a request that pays, end to end: gateways on a real Anvil with the
// devnet's EIP-3009 stablecoin, the x402 client packages signing what the gateway's own 402 offered,
// @x402/evm's facilitator (embedded) settling, a SQLite file holding the ledger and the journal that two
// gateways share. The network's node sits behind a counting relay, so a call not served is seen not to
// reach it.

const anvil = await startAnvil();
t.teardown(() => anvil.stop());
const seed = await seedDevnet(anvil.url, { stablecoin: true });
const coin = seed.stablecoin!;
const network = `eip155:${anvil.chainId}` as const;
const chain = { id: anvil.chainId, name: 'anvil', nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 }, rpcUrls: { default: { http: [anvil.url] } } } as const;
const reader = createPublicClient({ chain, transport: http(anvil.url) });
const relay = await startCountingRelay(anvil.url);
t.teardown(() => relay.close());

const settlementKey = generatePrivateKey();
await anvil.rpc('anvil_setBalance', [privateKeyToAccount(settlementKey).address, '0x56bc75e2d63100000']);
const payTo = privateKeyToAccount(generatePrivateKey()).address;
const PRICE = 250_000n;
const BUNDLE = 1_000;
const COST = 80; // eth_blockNumber
const offer = { credits: BUNDLE, price: PRICE.toString(), asset: coin.address, network, payTo, name: coin.name, version: coin.version };
const offers = { x402: [offer], one: [offer] };
const requirement = requirementsOf(resolvePaymentsSettings([{ offers, facilitator: { url: { url: 'http://unused.example' } } }]).offers.x402![0]!);

const dir = mkdtempSync(join(tmpdir(), 'tollgate-x402-http-'));
const path = join(dir, 'gateway.db');
const databases: Database.Database[] = [];
t.teardown(() => { for (const db of databases) db.close(); rmSync(dir, { recursive: true, force: true }); });
/** A journal on the gateways' SQLite file, by its own connection (as a second process has). */
function journal(): SqlitePaymentJournal {
  const db = new Database(path);
  databases.push(db);
  return new SqlitePaymentJournal(db);
}

const config = {
  plans: {
    // No daily allowance: every call is paid for with bought credits.
    x402: { dailyCredits: 0, creditsPerSecond: 1_000_000, failover: false },
    // One call a day, then bundles.
    one: { dailyCredits: COST, creditsPerSecond: 1_000_000, failover: false },
    // Sells nothing.
    free: { dailyCredits: 0, creditsPerSecond: 1_000_000, failover: false },
  },
  keys: [
    { key: 'x402-http-payer-key-01', id: 'payer', plan: 'x402' },
    { key: 'x402-http-refused-k-01', id: 'refused', plan: 'x402' },
    { key: 'x402-http-batch-key-01', id: 'batch', plan: 'x402' },
    { key: 'x402-http-mixed-key-01', id: 'mixed', plan: 'one' },
    { key: 'x402-http-ws-key-00001', id: 'ws', plan: 'x402' },
    { key: 'x402-http-free-key-001', id: 'free', plan: 'free' },
  ],
  networks: [{ name: 'eth', families: ['evm'], upstreams: [{ name: 'anvil', url: relay.url, wsUrl: anvil.wsUrl }] }],
};
const embedded = { embedded: { rpcUrl: anvil.url, settlementKey, confirmationTimeoutMs: 30_000 } };

async function gateway(plugins: TollgatePlugin[]): Promise<TestGateway> {
  const gw = await startTestGateway(config, [...plugins, httpTransport(), wsTransport(), evmFamily()]);
  t.teardown(() => gw.close());
  return gw;
}
// Two instances on one SQLite file: one ledger, one journal.
const a = await gateway([ledgerSqlite({ path }), payments({ offers, facilitator: embedded, journal: journal() })]);
const b = await gateway([ledgerSqlite({ path }), payments({ offers, facilitator: embedded, journal: journal() })]);

const balanceOf = async (who: Address): Promise<bigint> => reader.readContract({ address: coin.address, abi: coin.artifact.abi as never, functionName: 'balanceOf', args: [who] } as never) as Promise<bigint>;
/** Credits the key has bought and not spent, as the ledger keeps them. */
async function paidLeft(gw: TestGateway, keyId: string): Promise<number> {
  const ledger = gw.gateway.container.resolve<CreditLedger>(Tokens.CreditLedger);
  return (await ledger.balance(keyId, 0, new Date())).paidRemaining;
}

type ErrorBody = { id: unknown; error: { code: number; message: string; data: Record<string, unknown> } };
const call = (gw: TestGateway, key: string, headers: Record<string, string> = {}): Promise<RawAnswer> =>
  post(gw.url('eth', key), rpc('eth_blockNumber', []), { 'content-type': 'application/json', ...headers });

/** The offer of a 402 as an x402 client reads it: the PAYMENT-REQUIRED header. */
function offerOf(answer: RawAnswer): PaymentRequired {
  const header = answer.headers['payment-required'];
  if (typeof header !== 'string') throw new Error(`no PAYMENT-REQUIRED header (status ${answer.status}: ${answer.text})`);
  return decodePaymentRequiredHeader(header);
}

/** What an x402 client with `key` sends for `required`: the PAYMENT-SIGNATURE header, and its payload. */
async function sign(required: PaymentRequired, key: Hex = DEVNET_PAYER_KEY): Promise<{ header: string; payload: PaymentPayload }> {
  const client = x402Client.fromConfig({
    schemes: [{ network, client: new ExactEvmClientScheme(privateKeyToAccount(key)) }],
    spendControls: { allowedAssets: [{ network, asset: coin.address }] },
  });
  const payload = await client.createPaymentPayload(required);
  return { header: encodePaymentSignatureHeader(payload), payload };
}

/** `payload` claiming `accepted`, its signature optionally changed: what a tampering client sends. */
function tampered(payload: PaymentPayload, change: { accepted?: PaymentRequirements; signature?: Hex }): string {
  return encodePaymentSignatureHeader({
    ...payload,
    accepted: change.accepted ?? payload.accepted,
    payload: { ...payload.payload, ...(change.signature === undefined ? {} : { signature: change.signature }) },
  });
}

/** The 402 of the `refused` key, whose offer the refusal tests sign. */
const offered = async (): Promise<PaymentRequired> => offerOf(await call(a, 'x402-http-refused-k-01'));

t.test('a key with no credits left: the 402 is an x402 offer, in PAYMENT-REQUIRED and in error.data', async (t) => {
  const before = relay.count('eth_blockNumber');
  const answer = await call(a, 'x402-http-payer-key-01');
  t.equal(answer.status, 402);
  const required = offerOf(answer);
  t.match(required, { x402Version: 2, error: String, resource: { url: /^http:\/\/127\.0\.0\.1:\d+\/eth$/ } });
  t.same(required.accepts, [requirement], 'the plan\'s bundle, as the OfferBook builds its requirement');
  const { error } = answer.json as ErrorBody;
  t.equal(error.code, Errors.CREDITS_EXHAUSTED.code);
  t.same(error.data.x402, required, 'error.data carries the same offer');
  t.match(error.data, { dailyCredits: 0, cost: COST, resetsAt: String }, 'beside what the refusal said before');
  t.notOk(String(required.resource.url).includes('x402-http-payer-key-01'), 'the offer does not repeat the key');
  t.equal(relay.count('eth_blockNumber'), before, 'the node got nothing');

  const free = await call(a, 'x402-http-free-key-001');
  t.equal(free.status, 402, 'a plan that sells nothing: the 402 as before');
  t.equal(free.headers['payment-required'], undefined);
  t.equal((free.json as ErrorBody).error.data.x402, undefined);
});

t.test('a batch that could not be paid for keeps the requirements: 402, the header, each call\'s error.data', async (t) => {
  const answer = await post(a.url('eth', 'x402-http-batch-key-01'), [rpc('eth_blockNumber', [], 1), rpc('eth_chainId', [], 2), rpc('eth_blockNumber', [], 3)]);
  t.equal(answer.status, 402, 'every call refused: the batch answers 402, so an x402 client can pay');
  const required = offerOf(answer);
  t.same(required.accepts, [requirement]);
  const items = answer.json as ErrorBody[];
  t.equal(items.length, 3);
  for (const item of items) t.same(item.error.data.x402, required, `call ${String(item.id)} carries the offer`);

  // Nothing answered, one call refused for credits, the other for a method no family defines (a 200 error).
  const unanswered = await post(a.url('eth', 'x402-http-batch-key-01'), [rpc('eth_blockNumber', [], 1), rpc('nope_unknownMethod', [], 2)]);
  t.equal(unanswered.status, 402, 'a batch nothing of which ran still answers 402 with the offer');
  t.same(offerOf(unanswered).accepts, [requirement]);
  t.match(unanswered.json, [{ id: 1, error: { code: Errors.CREDITS_EXHAUSTED.code } }, { id: 2, error: { code: Errors.METHOD_NOT_FOUND.code } }]);
});

t.test('a mixed batch (the day paid for one call): 200, the answered call, the refused one with the offer in its error', async (t) => {
  const answer = await post(a.url('eth', 'x402-http-mixed-key-01'), [rpc('eth_blockNumber', [], 1), rpc('eth_blockNumber', [], 2)]);
  t.equal(answer.status, 200, 'a call was answered: a client paying now would send it twice');
  const items = answer.json as Array<{ id: number; result?: string; error?: ErrorBody['error'] }>;
  t.equal(items.filter((i) => i.result !== undefined).length, 1);
  const refused = items.filter((i) => i.error !== undefined);
  t.equal(refused.length, 1);
  t.same((refused[0]!.error!.data.x402 as PaymentRequired).accepts, [requirement]);
});

t.test('a request that pays: settled on chain, credited, then served, with PAYMENT-RESPONSE; paid once across instances', async (t) => {
  const key = 'x402-http-payer-key-01';
  const required = offerOf(await call(a, key));
  const { header } = await sign(required);
  const before = { payer: await balanceOf(DEVNET_PAYER_ADDRESS), payTo: await balanceOf(payTo), node: relay.count('eth_blockNumber') };
  const paid = await call(a, key, { 'payment-signature': header });
  t.equal(paid.status, 200, paid.text);
  t.match(paid.json, { result: /^0x[0-9a-f]+$/ });
  const settlement = decodePaymentResponseHeader(String(paid.headers['payment-response']));
  t.match(settlement, { success: true, network, payer: DEVNET_PAYER_ADDRESS, transaction: /^0x[0-9a-f]{64}$/ });
  t.equal((await reader.getTransactionReceipt({ hash: settlement.transaction as Hex })).status, 'success');
  t.equal(await balanceOf(DEVNET_PAYER_ADDRESS), before.payer - PRICE, 'the payer paid the price once');
  t.equal(await balanceOf(payTo), before.payTo + PRICE, 'payTo received it');
  t.equal(await paidLeft(a, 'payer'), BUNDLE - COST, 'credits = bundle - the call');
  t.equal(relay.count('eth_blockNumber'), before.node + 1, 'the call was served');

  for (const [name, gw] of [['the same instance', a], ['a second instance on the same SQLite file', b]] as const) {
    const again = await call(gw, key, { 'payment-signature': header });
    t.equal(again.status, 402, `the same header again, to ${name}: refused`);
    const { error } = again.json as ErrorBody;
    t.equal(error.code, Errors.PAYMENT_REFUSED.code);
    t.match(error.data, { code: 'PAYMENT_ALREADY_USED', reason: 'payment_already_used' });
    t.same(offerOf(again).accepts, [requirement], 'with the offer again');
    t.equal(await paidLeft(gw, 'payer'), BUNDLE - COST, 'nothing credited');
  }
  t.equal(await balanceOf(payTo), before.payTo + PRICE, 'nothing moved again');
  t.equal(relay.count('eth_blockNumber'), before.node + 1, 'the refused calls were not served');

  const spent = await call(b, key);
  t.equal(spent.status, 200, 'the second instance spends the credits bought on the first');
  t.equal(await paidLeft(a, 'payer'), BUNDLE - 2 * COST);
});

t.test('a batch carries one payment: paid once, every call served from the bundle', async (t) => {
  const key = 'x402-http-batch-key-01';
  const { header } = await sign(offerOf(await call(a, key)));
  const before = await balanceOf(payTo);
  const answer = await post(a.url('eth', key), [rpc('eth_blockNumber', [], 1), rpc('eth_blockNumber', [], 2), rpc('eth_blockNumber', [], 3)], { 'content-type': 'application/json', 'payment-signature': header });
  t.equal(answer.status, 200, answer.text);
  t.equal((answer.json as Array<{ result?: string }>).filter((i) => i.result !== undefined).length, 3);
  t.match(decodePaymentResponseHeader(String(answer.headers['payment-response'])), { success: true });
  t.equal(await balanceOf(payTo), before + PRICE, 'one payment, not one per call');
  t.equal(await paidLeft(a, 'batch'), BUNDLE - 3 * COST);
});

t.test('refused payments: 402 with the reason, the offer again, nothing credited, the node got nothing', async (t) => {
  const cases: Array<{ name: string; make: () => Promise<string>; code: string; reason: string }> = [
    {
      name: 'a bad signature',
      make: async () => {
        const { payload } = await sign(await offered());
        const signature = (payload.payload as { signature: Hex }).signature;
        return tampered(payload, { signature: `${signature.slice(0, 10)}${signature[10] === 'a' ? 'b' : 'a'}${signature.slice(11)}` as Hex });
      },
      code: 'PAYMENT_INVALID', reason: 'invalid_exact_evm_signature',
    },
    {
      name: 'an expired validBefore',
      make: async () => {
        const required = await offered();
        const { payload } = await sign({ ...required, accepts: [{ ...required.accepts[0]!, maxTimeoutSeconds: 1 }] });
        return tampered(payload, { accepted: required.accepts[0]! });
      },
      code: 'PAYMENT_INVALID', reason: 'invalid_exact_evm_payload_authorization_valid_before',
    },
    {
      name: 'a wrong payTo',
      make: async () => {
        const required = await offered();
        const { payload } = await sign({ ...required, accepts: [{ ...required.accepts[0]!, payTo: privateKeyToAccount(generatePrivateKey()).address }] });
        return tampered(payload, { accepted: required.accepts[0]! });
      },
      code: 'PAYMENT_INVALID', reason: 'invalid_exact_evm_recipient_mismatch',
    },
    {
      name: 'a wrong amount',
      make: async () => {
        const required = await offered();
        const { payload } = await sign({ ...required, accepts: [{ ...required.accepts[0]!, amount: '1' }] });
        return tampered(payload, { accepted: required.accepts[0]! });
      },
      code: 'PAYMENT_INVALID', reason: 'invalid_exact_evm_payload_authorization_value_mismatch',
    },
    {
      name: 'an empty wallet',
      make: async () => (await sign(await offered(), generatePrivateKey())).header,
      code: 'PAYMENT_INVALID', reason: 'invalid_exact_evm_insufficient_balance',
    },
    { name: 'a header that is not a payment', make: async () => 'not a payment', code: 'PAYMENT_MALFORMED', reason: 'payment_malformed' },
  ];
  for (const c of cases) {
    t.test(c.name, async (t) => {
      const header = await c.make();
      const before = { payTo: await balanceOf(payTo), node: relay.count('eth_blockNumber'), paid: await paidLeft(a, 'refused') };
      const answer = await call(a, 'x402-http-refused-k-01', { 'payment-signature': header });
      t.equal(answer.status, 402);
      const { error } = answer.json as ErrorBody;
      t.equal(error.code, Errors.PAYMENT_REFUSED.code);
      t.match(error.data, { code: c.code, reason: c.reason });
      t.same((error.data.x402 as PaymentRequired).accepts, [requirement], 'the offer again, in error.data');
      t.match(offerOf(answer), { error: c.reason, accepts: [requirement] }, 'and in PAYMENT-REQUIRED, with the reason');
      t.equal(answer.headers['payment-response'], undefined);
      t.equal(await paidLeft(a, 'refused'), before.paid, 'nothing credited');
      t.equal(await balanceOf(payTo), before.payTo, 'nothing settled');
      t.equal(relay.count('eth_blockNumber'), before.node, 'the node got nothing');
    });
  }
});

t.test('a facilitator that is down: 503 PAYMENT_UNAVAILABLE with the offer, nothing credited or served', async (t) => {
  const down = await gateway([payments({ offers, facilitator: { url: { url: `http://127.0.0.1:${await closedPort()}`, timeoutMs: 5_000 } } })]);
  const key = 'x402-http-refused-k-01';
  const { header } = await sign(offerOf(await call(down, key)));
  const node = relay.count('eth_blockNumber');
  const answer = await call(down, key, { 'payment-signature': header });
  t.equal(answer.status, 503);
  const { error } = answer.json as ErrorBody;
  t.equal(error.code, Errors.PAYMENT_UNAVAILABLE.code);
  t.match(error.data, { code: 'FACILITATOR_UNAVAILABLE', reason: 'facilitator_unavailable' });
  t.same(offerOf(answer).accepts, [requirement]);
  t.equal(await paidLeft(down, 'refused'), 0, 'nothing credited');
  t.equal(relay.count('eth_blockNumber'), node, 'the node got nothing');
});

t.test('browsers: the preflight allows PAYMENT-SIGNATURE, answers expose PAYMENT-REQUIRED and PAYMENT-RESPONSE', async (t) => {
  const preflight = await post(a.url('eth', 'x402-http-payer-key-01'), '', { origin: 'https://app.example', 'access-control-request-method': 'POST' }, 'OPTIONS' as 'POST');
  t.match(String(preflight.headers['access-control-allow-headers']), /\bpayment-signature\b/);
  const refused = await call(a, 'x402-http-free-key-001', { origin: 'https://app.example' });
  t.match(String(refused.headers['access-control-expose-headers']), /\bpayment-required\b.*\bpayment-response\b/);
});

/** Opens a WebSocket, sends a call, and resolves with the close it gets. */
async function closeOf(t: Test, key: string): Promise<{ code: number; reason: string }> {
  const socket = new WebSocket(`${a.origin.replace('http', 'ws')}/eth/ws/v3/${key}`);
  t.teardown(() => socket.terminate());
  const closed = new Promise<{ code: number; reason: string }>((resolve) => socket.on('close', (code, reason) => resolve({ code, reason: reason.toString() })));
  await new Promise<void>((resolve, reject) => { socket.once('open', resolve); socket.once('error', reject); });
  socket.send(JSON.stringify(rpc('eth_blockNumber', [])));
  return closed;
}

t.test('a WebSocket whose key ran out: 4402, and the reason points to the HTTP top-up when the plan sells bundles', async (t) => {
  const offered = await closeOf(t, 'x402-http-ws-key-00001');
  t.same(offered, { code: 4402, reason: 'daily credit limit reached; x402: top up over HTTP, then reconnect' });
  t.ok(Buffer.byteLength(offered.reason) <= 123, 'within a close reason\'s 123 bytes');
  t.same(await closeOf(t, 'x402-http-free-key-001'), { code: 4402, reason: 'daily credit limit reached' }, 'a plan that sells nothing: as before');
});
