import 'reflect-metadata';
import t, { type Test } from 'tap';
import { createServer, type Server } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { createPublicClient, http, type Address, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { x402Client } from '@x402/core/client';
import { x402Facilitator } from '@x402/core/facilitator';
import { decodePaymentRequiredHeader, decodePaymentResponseHeader, encodePaymentRequiredHeader, encodePaymentSignatureHeader } from '@x402/core/http';
import { ExactEvmScheme as ExactEvmClientScheme } from '@x402/evm/exact/client';
import { MemoryCreditLedger } from '../core/store-api.js';
import { DEVNET_PAYER_ADDRESS, DEVNET_PAYER_KEY, seedDevnet, startAnvil } from '@tollgate/devnet';
import {
  FacilitatorUnavailableError,
  LedgerPaidCredits,
  MemoryPaymentJournal,
  OfferBook,
  PaymentDesk,
  SqlitePaymentJournal,
  embeddedFacilitator,
  paymentIdOf,
  resolvePaymentsSettings,
  urlFacilitator,
  type PaidCredits,
  type PaymentFacilitator,
  type PaymentJournal,
  type PaymentPayload,
  type PaymentRequired,
  type PaymentRequirements,
} from '../plugins/payments/index.js';

// x402 payments against a real chain: the devnet's EIP-3009 stablecoin on Anvil, the x402 client
// packages signing, @x402/evm's facilitator settling. No canned answers.

const anvil = await startAnvil();
t.teardown(() => anvil.stop());
const seed = await seedDevnet(anvil.url, { stablecoin: true });
const coin = seed.stablecoin!;
const network = `eip155:${anvil.chainId}` as const;
const chain = { id: anvil.chainId, name: 'anvil', nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 }, rpcUrls: { default: { http: [anvil.url] } } } as const;
const reader = createPublicClient({ chain, transport: http(anvil.url) });

// The operator: a settlement key with ether for gas, and a fresh address that receives payments.
const settlementKey = generatePrivateKey();
await anvil.rpc('anvil_setBalance', [privateKeyToAccount(settlementKey).address, '0x56bc75e2d63100000']);
const payTo = privateKeyToAccount(generatePrivateKey()).address;
const PRICE = 250_000n; // 0.25 tUSD
const CREDITS = 1_000;
const settings = resolvePaymentsSettings([{
  offers: { pro: [{ credits: CREDITS, price: PRICE.toString(), asset: coin.address, network, payTo, name: coin.name, version: coin.version }] },
  facilitator: { embedded: { rpcUrl: anvil.url, settlementKey } },
}]);
const offers = new OfferBook(settings.offers);
const facilitator = embeddedFacilitator({ rpcUrl: anvil.url, settlementKey, networks: [network], confirmationTimeoutMs: 30_000 });
const RESOURCE = { url: 'http://127.0.0.1/eth', description: 'Tollgate credits' };

const balanceOf = async (who: Address): Promise<bigint> => reader.readContract({ address: coin.address, abi: coin.artifact.abi as never, functionName: 'balanceOf', args: [who] } as never) as Promise<bigint>;
const used = async (payer: Address, nonce: Hex): Promise<boolean> => reader.readContract({ address: coin.address, abi: coin.artifact.abi as never, functionName: 'authorizationState', args: [payer, nonce] } as never) as Promise<boolean>;

/** The 402's offer as a client receives it: through the PAYMENT-REQUIRED header's codec. */
function offered(plan = 'pro'): PaymentRequired {
  const required = offers.paymentRequired(plan, RESOURCE, 'credits spent');
  if (required === undefined) throw new Error(`plan ${plan} sells nothing`);
  return decodePaymentRequiredHeader(encodePaymentRequiredHeader(required));
}

/** What an x402 client with `key` sends for `required`: a PAYMENT-SIGNATURE header, and its payload. */
async function pay(required: PaymentRequired, key: Hex = DEVNET_PAYER_KEY): Promise<{ header: string; payload: PaymentPayload }> {
  const client = x402Client.fromConfig({
    schemes: [{ network, client: new ExactEvmClientScheme(privateKeyToAccount(key)) }],
    spendControls: { allowedAssets: [{ network, asset: coin.address }] },
  });
  const payload = await client.createPaymentPayload(required);
  return { header: encodePaymentSignatureHeader(payload), payload };
}

/** `payload` with its `accepted` and authorization changed, signature kept: what a tampering client sends. */
function header(payload: PaymentPayload, change: { accepted?: PaymentRequirements; signature?: Hex } = {}): string {
  return encodePaymentSignatureHeader({
    ...payload,
    accepted: change.accepted ?? payload.accepted,
    payload: { ...payload.payload, ...(change.signature === undefined ? {} : { signature: change.signature }) },
  });
}

const nonceOf = (payload: PaymentPayload): Hex => (payload.payload as { authorization: { nonce: Hex } }).authorization.nonce;
const fromOf = (payload: PaymentPayload): Address => (payload.payload as { authorization: { from: Address } }).authorization.from;

function desk(parts: { journal?: PaymentJournal; credits?: PaidCredits; facilitator?: PaymentFacilitator; clock?: { now(): number } } = {}) {
  const journal = parts.journal ?? new MemoryPaymentJournal();
  const credits = parts.credits ?? new LedgerPaidCredits(new MemoryCreditLedger());
  return { journal, credits, desk: new PaymentDesk({ offers, facilitator: parts.facilitator ?? facilitator, journal, credits, ...(parts.clock === undefined ? {} : { clock: parts.clock }) }) };
}

t.test('an offer becomes the x402 v2 requirement of the exact scheme, with the token\'s EIP-712 domain', async (t) => {
  const required = offered();
  t.same(required, {
    x402Version: 2,
    error: 'credits spent',
    resource: RESOURCE,
    accepts: [{ scheme: 'exact', network, asset: coin.address, amount: '250000', payTo, maxTimeoutSeconds: 300, extra: { name: 'Tollgate Devnet USD', version: '2' } }],
  });
  t.equal(offers.paymentRequired('free', RESOURCE), undefined, 'a plan that sells nothing offers nothing');
});

t.test('a payment signed by the x402 client is verified and settled on Anvil, then credited once', async (t) => {
  const { desk: d, journal, credits } = desk();
  const before = { payer: await balanceOf(DEVNET_PAYER_ADDRESS), payTo: await balanceOf(payTo) };
  const { header: h, payload } = await pay(offered());
  const outcome = await d.pay('acme', 'pro', h);
  if (!outcome.ok) return t.fail(`refused: ${outcome.code} ${outcome.reason} ${outcome.message}`);
  t.equal(await balanceOf(DEVNET_PAYER_ADDRESS), before.payer - PRICE, 'the payer paid exactly the price');
  t.equal(await balanceOf(payTo), before.payTo + PRICE, 'payTo received exactly the price');
  const receipt = await reader.getTransactionReceipt({ hash: outcome.settlement.transaction as Hex });
  t.equal(receipt.status, 'success');
  t.equal(await used(DEVNET_PAYER_ADDRESS, nonceOf(payload)), true, 'the authorization is spent on chain');
  t.equal(await credits.balance('acme'), CREDITS);
  t.match(outcome.entry, { id: paymentIdOf(network, coin.address, DEVNET_PAYER_ADDRESS, nonceOf(payload)), keyId: 'acme', plan: 'pro', credits: CREDITS, state: 'credited', transaction: receipt.transactionHash, amount: '250000', payer: DEVNET_PAYER_ADDRESS });
  t.same(decodePaymentResponseHeader(outcome.responseHeader), outcome.settlement, 'PAYMENT-RESPONSE carries the settlement');
  t.match(outcome.settlement, { success: true, network, payer: DEVNET_PAYER_ADDRESS });
  t.same(await journal.uncredited(), []);

  t.test('the same header again, to this desk and to a second instance sharing the journal: no second credit', async (t) => {
    const again = await d.pay('acme', 'pro', h);
    t.match(again, { ok: false, code: 'PAYMENT_ALREADY_USED', status: 402 });
    const second = new PaymentDesk({ offers, facilitator, journal, credits });
    t.match(await second.pay('acme', 'pro', h), { ok: false, code: 'PAYMENT_ALREADY_USED' });
    t.equal(await credits.balance('acme'), CREDITS);
    t.equal(await balanceOf(payTo), before.payTo + PRICE, 'nothing moved again');
  });

  t.test('an instance without the journal entry is still refused: the chain spent the nonce', async (t) => {
    const other = desk();
    const replay = await other.desk.pay('acme', 'pro', h);
    t.match(replay, { ok: false, code: 'PAYMENT_INVALID', status: 402, reason: 'invalid_exact_evm_nonce_already_used' });
    t.equal(await other.credits.balance('acme'), 0);
    t.equal(await balanceOf(payTo), before.payTo + PRICE);
  });
});

t.test('the same payment sent twice at once: one is taken, the other refused, credited once', async (t) => {
  const { desk: d, credits } = desk();
  const before = await balanceOf(payTo);
  const { header: h } = await pay(offered());
  const outcomes = await Promise.all([d.pay('acme', 'pro', h), d.pay('acme', 'pro', h)]);
  t.equal(outcomes.filter((o) => o.ok).length, 1, 'one taken');
  t.equal(outcomes.filter((o) => !o.ok).length, 1, 'one refused');
  t.equal(await credits.balance('acme'), CREDITS);
  t.equal(await balanceOf(payTo), before + PRICE, 'paid once');
});

t.test('refused payments: the reason, nothing settled, nothing credited', async (t) => {
  const cases: Array<{ name: string; make: () => Promise<{ header: string; payer: Address; nonce: Hex }>; code: string; reason?: string }> = [
    {
      name: 'a bad signature',
      make: async () => {
        const { payload } = await pay(offered());
        const signature = (payload.payload as { signature: Hex }).signature;
        const flipped = `${signature.slice(0, 10)}${signature[10] === 'a' ? 'b' : 'a'}${signature.slice(11)}` as Hex;
        return { header: header(payload, { signature: flipped }), payer: fromOf(payload), nonce: nonceOf(payload) };
      },
      code: 'PAYMENT_INVALID', reason: 'invalid_exact_evm_signature',
    },
    {
      name: 'an expired validBefore',
      make: async () => {
        const required = offered();
        const { payload } = await pay({ ...required, accepts: [{ ...required.accepts[0]!, maxTimeoutSeconds: 1 }] });
        return { header: header(payload, { accepted: required.accepts[0]! }), payer: fromOf(payload), nonce: nonceOf(payload) };
      },
      code: 'PAYMENT_INVALID', reason: 'invalid_exact_evm_payload_authorization_valid_before',
    },
    {
      name: 'an authorization to another payTo, claiming the offer',
      make: async () => {
        const required = offered();
        const elsewhere = privateKeyToAccount(generatePrivateKey()).address;
        const { payload } = await pay({ ...required, accepts: [{ ...required.accepts[0]!, payTo: elsewhere }] });
        return { header: header(payload, { accepted: required.accepts[0]! }), payer: fromOf(payload), nonce: nonceOf(payload) };
      },
      code: 'PAYMENT_INVALID', reason: 'invalid_exact_evm_recipient_mismatch',
    },
    {
      name: 'an authorization for less than the price, claiming the offer',
      make: async () => {
        const required = offered();
        const { payload } = await pay({ ...required, accepts: [{ ...required.accepts[0]!, amount: '1' }] });
        return { header: header(payload, { accepted: required.accepts[0]! }), payer: fromOf(payload), nonce: nonceOf(payload) };
      },
      code: 'PAYMENT_INVALID', reason: 'invalid_exact_evm_payload_authorization_value_mismatch',
    },
    {
      name: 'an empty wallet',
      make: async () => {
        const { header: h, payload } = await pay(offered(), generatePrivateKey());
        return { header: h, payer: fromOf(payload), nonce: nonceOf(payload) };
      },
      code: 'PAYMENT_INVALID', reason: 'invalid_exact_evm_insufficient_balance',
    },
    {
      name: 'a payment for a bundle the plan does not sell (another payTo, as offered to it)',
      make: async () => {
        const required = offered();
        const { header: h, payload } = await pay({ ...required, accepts: [{ ...required.accepts[0]!, payTo: privateKeyToAccount(generatePrivateKey()).address }] });
        return { header: h, payer: fromOf(payload), nonce: nonceOf(payload) };
      },
      code: 'PAYMENT_NO_OFFER',
    },
    {
      name: 'a header that is not a payment',
      make: async () => ({ header: 'not base64 json', payer: DEVNET_PAYER_ADDRESS, nonce: `0x${'00'.repeat(32)}` }),
      code: 'PAYMENT_MALFORMED',
    },
  ];
  for (const c of cases) {
    t.test(c.name, async (t) => {
      const { desk: d, journal, credits } = desk();
      const { header: h, payer, nonce } = await c.make();
      const before = { payer: await balanceOf(payer), payTo: await balanceOf(payTo) };
      const outcome = await d.pay('acme', 'pro', h);
      t.match(outcome, { ok: false, code: c.code, status: 402 });
      if (c.reason !== undefined) t.equal(!outcome.ok && outcome.reason, c.reason);
      t.equal(await balanceOf(payer), before.payer, 'the payer kept its funds');
      t.equal(await balanceOf(payTo), before.payTo, 'payTo received nothing');
      t.equal(await used(payer, nonce), false, 'the authorization is unspent');
      t.equal(await credits.balance('acme'), 0, 'nothing credited');
      t.same(await journal.uncredited(), []);
      t.equal(await journal.get(paymentIdOf(network, coin.address, payer, nonce)), undefined, 'nothing recorded');
    });
  }
});

/** Credits that fail on their first add, as a process dying between record and credit would. */
class DiesOnFirstAdd extends LedgerPaidCredits {
  #died = false;
  override async add(keyId: string, credits: number, paymentId: string): Promise<boolean> {
    if (!this.#died) {
      this.#died = true;
      throw new Error('killed between settle and credit');
    }
    return super.add(keyId, credits, paymentId);
  }
}

async function crashAndRecover(t: Test, journal: PaymentJournal, reopen: () => PaymentJournal): Promise<void> {
  const dying = desk({ journal, credits: new DiesOnFirstAdd(new MemoryCreditLedger()) });
  const before = await balanceOf(payTo);
  const { header: h, payload } = await pay(offered());
  await t.rejects(dying.desk.pay('acme', 'pro', h), /killed between settle and credit/);
  const id = paymentIdOf(network, coin.address, DEVNET_PAYER_ADDRESS, nonceOf(payload));
  const recorded = await journal.get(id);
  t.match(recorded, { state: 'settled', keyId: 'acme', credits: CREDITS });
  t.equal(await balanceOf(payTo), before + PRICE, 'the payment settled before the crash');
  t.equal((await reader.getTransactionReceipt({ hash: recorded!.transaction as Hex })).status, 'success', 'the journal holds the settlement transaction');

  const restarted = desk({ journal: reopen() });
  t.same(await restarted.desk.recover(), { credited: 1, failed: 0, pending: 0 }, 'recover() credits the settled payment');
  t.equal(await restarted.credits.balance('acme'), CREDITS);
  t.match(await restarted.journal.get(id), { state: 'credited' });
  t.same(await restarted.desk.recover(), { credited: 0, failed: 0, pending: 0 }, 'and only once');
  t.match(await restarted.desk.pay('acme', 'pro', h), { ok: false, code: 'PAYMENT_ALREADY_USED' });
  t.equal(await restarted.credits.balance('acme'), CREDITS);
}

t.test('a crash between settle and credit: recover() at start credits the payment once (memory journal)', async (t) => {
  const journal = new MemoryPaymentJournal();
  await crashAndRecover(t, journal, () => journal);
});

t.test('a crash between settle and credit: recover() after a restart credits it once (SQLite journal, reopened file)', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-x402-'));
  const open: Database.Database[] = [];
  t.teardown(() => { for (const db of open) db.close(); rmSync(dir, { recursive: true, force: true }); });
  const connect = (): SqlitePaymentJournal => {
    const db = new Database(join(dir, 'payments.db'));
    open.push(db);
    return new SqlitePaymentJournal(db);
  };
  const first = connect();
  await crashAndRecover(t, first, () => {
    open[0]!.close();
    return connect();
  });
});

t.test('a crash between the credit and the journal\'s mark: recover() does not credit twice', async (t) => {
  class MarkFailsOnce extends MemoryPaymentJournal {
    #failed = false;
    override async markCredited(id: string, at: number): Promise<boolean> {
      if (!this.#failed) {
        this.#failed = true;
        throw new Error('killed before the mark');
      }
      return super.markCredited(id, at);
    }
  }
  const journal = new MarkFailsOnce();
  const credits = new LedgerPaidCredits(new MemoryCreditLedger());
  const { header: h } = await pay(offered());
  await t.rejects(desk({ journal, credits }).desk.pay('acme', 'pro', h), /killed before the mark/);
  t.equal(await credits.balance('acme'), CREDITS);
  t.same(await desk({ journal, credits }).desk.recover(), { credited: 1, failed: 0, pending: 0 });
  t.equal(await credits.balance('acme'), CREDITS, 'the credit is idempotent by payment id');
  t.same(await journal.uncredited(), []);
});

/** `inner`, whose settle dies: `after` the real settle (the transfer is on chain), or `before` it (nothing sent). */
function dyingFacilitator(inner: PaymentFacilitator, when: 'after' | 'before'): PaymentFacilitator & { transactions: string[] } {
  const transactions: string[] = [];
  return {
    kind: 'dying',
    transactions,
    verify: (payload, requirements) => inner.verify(payload, requirements),
    async settle(payload, requirements) {
      if (when === 'after') transactions.push((await inner.settle(payload, requirements)).transaction);
      throw new FacilitatorUnavailableError('settle', `the process died ${when} the transfer was sent`);
    },
  };
}

t.test('a crash between settle and record: the settling entry holds the authorization, recover() finds it used on chain and credits it once', async (t) => {
  const journal = new MemoryPaymentJournal();
  const dying = dyingFacilitator(facilitator, 'after');
  const before = { payer: await balanceOf(DEVNET_PAYER_ADDRESS), payTo: await balanceOf(payTo) };
  const { header: h, payload } = await pay(offered());
  const first = desk({ journal, facilitator: dying });
  t.match(await first.desk.pay('acme', 'pro', h), { ok: false, code: 'FACILITATOR_UNAVAILABLE', status: 503 });
  const id = paymentIdOf(network, coin.address, DEVNET_PAYER_ADDRESS, nonceOf(payload));
  t.match(await journal.get(id), { state: 'settling', nonce: nonceOf(payload), payload, transaction: undefined }, 'recorded before the settle, with the signed authorization');
  t.equal(await used(DEVNET_PAYER_ADDRESS, nonceOf(payload)), true, 'yet the transfer is on chain');
  t.equal(await first.credits.balance('acme'), 0);

  const restarted = desk({ journal });
  t.same(await restarted.desk.recover(), { credited: 1, failed: 0, pending: 0 });
  t.match(await journal.get(id), { state: 'credited', transaction: dying.transactions[0] }, 'the transaction from the AuthorizationUsed log');
  t.equal(await restarted.credits.balance('acme'), CREDITS);
  t.same(await restarted.desk.recover(), { credited: 0, failed: 0, pending: 0 });
  t.match(await restarted.desk.pay('acme', 'pro', h), { ok: false, code: 'PAYMENT_ALREADY_USED' });
  t.equal(await restarted.credits.balance('acme'), CREDITS, 'credited once');
  t.equal(await balanceOf(DEVNET_PAYER_ADDRESS), before.payer - PRICE, 'the payer paid once');
  t.equal(await balanceOf(payTo), before.payTo + PRICE);
});

t.test('a settle that died before sending: recover() settles the still-valid authorization now, once', async (t) => {
  const journal = new MemoryPaymentJournal();
  const before = await balanceOf(payTo);
  const { header: h, payload } = await pay(offered());
  t.match(await desk({ journal, facilitator: dyingFacilitator(facilitator, 'before') }).desk.pay('acme', 'pro', h), { ok: false, code: 'FACILITATOR_UNAVAILABLE' });
  t.equal(await used(DEVNET_PAYER_ADDRESS, nonceOf(payload)), false, 'nothing was sent');
  const restarted = desk({ journal });
  t.same(await restarted.desk.recover(), { credited: 1, failed: 0, pending: 0 });
  const entry = await journal.get(paymentIdOf(network, coin.address, DEVNET_PAYER_ADDRESS, nonceOf(payload)));
  t.equal(entry?.state, 'credited');
  t.equal((await reader.getTransactionReceipt({ hash: entry!.transaction as Hex })).status, 'success');
  t.equal(await restarted.credits.balance('acme'), CREDITS);
  t.equal(await balanceOf(payTo), before + PRICE, 'paid once');
});

t.test('a 503 on settle, then the same header again: the retry resolves the settling entry and answers with the credit', async (t) => {
  const journal = new MemoryPaymentJournal();
  const credits = new LedgerPaidCredits(new MemoryCreditLedger());
  const before = await balanceOf(payTo);
  const { header: h } = await pay(offered());
  t.match(await desk({ journal, credits, facilitator: dyingFacilitator(facilitator, 'after') }).desk.pay('acme', 'pro', h), { ok: false, status: 503 });
  const retry = await desk({ journal, credits }).desk.pay('acme', 'pro', h);
  t.match(retry, { ok: true, entry: { state: 'credited' } });
  t.match(await desk({ journal, credits }).desk.pay('acme', 'pro', h), { ok: false, code: 'PAYMENT_ALREADY_USED' });
  t.equal(await credits.balance('acme'), CREDITS);
  t.equal(await balanceOf(payTo), before + PRICE);
});

t.test('an interrupted settle whose authorization expired unused: recover() marks it failed, nothing credited', async (t) => {
  const journal = new MemoryPaymentJournal();
  const before = await balanceOf(payTo);
  const { header: h, payload } = await pay(offered());
  await desk({ journal, facilitator: dyingFacilitator(facilitator, 'before') }).desk.pay('acme', 'pro', h);
  const validBefore = Number((payload.payload as { authorization: { validBefore: string } }).authorization.validBefore);
  const later = desk({ journal, clock: { now: () => validBefore * 1000 } });
  t.same(await later.desk.recover(), { credited: 0, failed: 1, pending: 0 });
  t.match(await journal.get(paymentIdOf(network, coin.address, DEVNET_PAYER_ADDRESS, nonceOf(payload))), { state: 'failed', failure: /expired unused/ });
  t.equal(await later.credits.balance('acme'), 0);
  t.equal(await balanceOf(payTo), before);
  t.match(await later.desk.pay('acme', 'pro', h), { ok: false, code: 'PAYMENT_ALREADY_USED', message: /sign a new one/ });
});

/** A facilitator over HTTP, as the hosted ones answer: POST /verify and /settle, backed by @x402/evm on Anvil. */
async function hostedFacilitator(): Promise<Server> {
  const { ExactEvmScheme } = await import('@x402/evm/exact/facilitator');
  const { toFacilitatorEvmSigner } = await import('@x402/evm');
  const { createWalletClient, publicActions } = await import('viem');
  const account = privateKeyToAccount(settlementKey);
  const wallet = createWalletClient({ account, chain, transport: http(anvil.url) }).extend(publicActions);
  const inner = new x402Facilitator().register(network, new ExactEvmScheme(toFacilitatorEvmSigner({ ...wallet, address: account.address } as never)));
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => { body += chunk.toString(); });
    req.on('end', () => {
      const { paymentPayload, paymentRequirements } = JSON.parse(body) as { paymentPayload: PaymentPayload; paymentRequirements: PaymentRequirements };
      const work = req.url === '/verify' ? inner.verify(paymentPayload, paymentRequirements) : inner.settle(paymentPayload, paymentRequirements);
      work.then(
        (answer) => { res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer)); },
        (error: Error) => { res.writeHead(500).end(error.message); },
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

t.test('a facilitator by URL: a hosted-style facilitator verifies and settles; its refusals keep their reason', async (t) => {
  const server = await hostedFacilitator();
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  const { desk: d, credits } = desk({ facilitator: urlFacilitator({ url, timeoutMs: 30_000 }) });
  const before = await balanceOf(payTo);
  const outcome = await d.pay('acme', 'pro', (await pay(offered())).header);
  t.match(outcome, { ok: true, entry: { state: 'credited' } });
  t.equal(await balanceOf(payTo), before + PRICE);
  t.equal(await credits.balance('acme'), CREDITS);
  const empty = await d.pay('acme', 'pro', (await pay(offered(), generatePrivateKey())).header);
  t.match(empty, { ok: false, code: 'PAYMENT_INVALID', reason: 'invalid_exact_evm_insufficient_balance' });
  t.equal(await credits.balance('acme'), CREDITS);
});

t.test('a facilitator by URL cannot ask the chain: recover() settles again, and the token\'s refusal of a used nonce counts as settled', async (t) => {
  const server = await hostedFacilitator();
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const hosted = urlFacilitator({ url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, timeoutMs: 30_000 });
  t.equal(hosted.authorizationState, undefined);
  const journal = new MemoryPaymentJournal();
  const before = await balanceOf(payTo);
  const { header: h, payload } = await pay(offered());
  await desk({ journal, facilitator: dyingFacilitator(hosted, 'after') }).desk.pay('acme', 'pro', h);
  const restarted = desk({ journal, facilitator: hosted });
  t.same(await restarted.desk.recover(), { credited: 1, failed: 0, pending: 0 });
  t.match(await journal.get(paymentIdOf(network, coin.address, DEVNET_PAYER_ADDRESS, nonceOf(payload))), { state: 'credited', transaction: '' }, 'settled; its transaction unknown');
  t.equal(await restarted.credits.balance('acme'), CREDITS);
  t.equal(await balanceOf(payTo), before + PRICE, 'paid once');
});

t.test('a facilitator that is down: 503 with why, nothing settled or credited', async (t) => {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  const { desk: d, credits } = desk({ facilitator: urlFacilitator({ url, timeoutMs: 5_000 }) });
  const { header: h, payload } = await pay(offered());
  const outcome = await d.pay('acme', 'pro', h);
  t.match(outcome, { ok: false, code: 'FACILITATOR_UNAVAILABLE', status: 503, message: /verify failed/ });
  t.equal(await credits.balance('acme'), 0);
  t.equal(await used(DEVNET_PAYER_ADDRESS, nonceOf(payload)), false);
});

t.test('settings: offers and one facilitator are checked by name', async (t) => {
  const offer = { credits: 1, price: '1', asset: coin.address, network, payTo, name: 'x', version: '2' };
  t.throws(() => resolvePaymentsSettings([{ offers: { pro: [offer] } }]), /needs a facilitator/);
  t.throws(() => resolvePaymentsSettings([{ facilitator: { url: { url: 'https://f.example' }, embedded: { rpcUrl: anvil.url, settlementKey } } }]), /one of url or embedded, not both/);
  t.throws(() => resolvePaymentsSettings([{ offers: { pro: [{ ...offer, network: 'base' }] }, facilitator: { url: { url: 'https://f.example' } } }]), /network: must be a CAIP-2 EVM network/);
  t.throws(() => resolvePaymentsSettings([{ offers: { pro: [{ ...offer, price: '0.25' }] }, facilitator: { url: { url: 'https://f.example' } } }]), /price: must be a positive amount in atomic units/);
  t.same(resolvePaymentsSettings([{ facilitator: { url: { url: 'https://f.example' } } }]), { offers: {}, facilitator: { kind: 'url', url: 'https://f.example', timeoutMs: 30_000 } });
});
