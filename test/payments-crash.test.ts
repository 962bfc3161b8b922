import 'reflect-metadata';
import t, { type Test } from 'tap';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { createPublicClient, http, type Address, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { x402Client } from '@x402/core/client';
import { encodePaymentSignatureHeader } from '@x402/core/http';
import { ExactEvmScheme as ExactEvmClientScheme } from '@x402/evm/exact/client';
import { DEVNET_PAYER_ADDRESS, DEVNET_PAYER_KEY, seedDevnet, startAnvil } from '@tollgate/devnet';
import { request } from 'undici';
import { openSqliteStore } from '../plugins/ledger-sqlite/index.js';
import { OfferBook, SqlitePaymentJournal, paymentIdOf, resolvePaymentsSettings, type PaymentPayload } from '../plugins/payments/index.js';
import { startGatewayProcess, type GatewayProcess } from './helpers/gateway-process.js';
import { post, rpc } from './helpers/json-rpc.js';
import { until } from './helpers/until.js';

// kill -9 of a gateway between the facilitator's settle and the journal's record: the gateway runs in a
// child process with the SQLite store (the ledger and the journal in its file) and the embedded
// facilitator, which reaches Anvil through a relay that holds the answer to eth_sendRawTransaction. A
// client pays over HTTP (PAYMENT-SIGNATURE on a JSON-RPC call of a key without credits); the test waits
// for the journal's `settling` entry and the relay's held answer, kills the child, and starts it again:
// the payment is credited once to the key's paid balance, and the payer paid once.

// Six gateway child processes in all (three per case, each loading the x402 packages through tsx): past
// the suite's 120 s on two busy cores.
t.setTimeout(300_000);

const anvil = await startAnvil();
t.teardown(() => anvil.stop());
const seed = await seedDevnet(anvil.url, { stablecoin: true });
const coin = seed.stablecoin!;
const network = `eip155:${anvil.chainId}` as const;
const chain = { id: anvil.chainId, name: 'anvil', nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 }, rpcUrls: { default: { http: [anvil.url] } } } as const;
const reader = createPublicClient({ chain, transport: http(anvil.url) });
const settlementKey = generatePrivateKey();
await anvil.rpc('anvil_setBalance', [privateKeyToAccount(settlementKey).address, '0x56bc75e2d63100000']);
const payTo = privateKeyToAccount(generatePrivateKey()).address;
const PRICE = 250_000n;
const CREDITS = 1_000;
const OFFER = { credits: CREDITS, price: PRICE.toString(), asset: coin.address, network, payTo, name: coin.name, version: coin.version };
const KEY = 'x402-crash-payer-key-01';
const COST = 80; // eth_blockNumber

const balanceOf = async (who: Address): Promise<bigint> => reader.readContract({ address: coin.address, abi: coin.artifact.abi as never, functionName: 'balanceOf', args: [who] } as never) as Promise<bigint>;
const used = async (payer: Address, nonce: Hex): Promise<boolean> => reader.readContract({ address: coin.address, abi: coin.artifact.abi as never, functionName: 'authorizationState', args: [payer, nonce] } as never) as Promise<boolean>;

/**
 * A JSON-RPC relay in front of Anvil. `eth_sendRawTransaction` is, by `mode`: `forward` sent on, its
 * answer kept and never given back (the transfer is mined, the sender never hears of it); `drop` never
 * sent (nothing is mined). `release()` lets everything through from then on.
 */
async function startRelay(mode: 'forward' | 'drop') {
  const held: Array<{ res: ServerResponse; answer: { result?: string } | undefined }> = [];
  let released = false;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      const call = JSON.parse(body) as { method?: string };
      const holding = !released && call.method === 'eth_sendRawTransaction';
      if (holding && mode === 'drop') return void held.push({ res, answer: undefined });
      fetch(anvil.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body }).then(async (answer) => {
        const text = await answer.text();
        if (holding) held.push({ res, answer: JSON.parse(text) as { result?: string } });
        else res.writeHead(answer.status, { 'content-type': 'application/json' }).end(text);
      }, (error: Error) => res.writeHead(502).end(error.message));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    held,
    release: () => void (released = true),
    close: () => new Promise<void>((resolve) => {
      for (const { res } of held) res.socket?.destroy();
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

async function signedPayment(): Promise<{ header: string; payload: PaymentPayload }> {
  const offers = new OfferBook(resolvePaymentsSettings([{ offers: { x402: [OFFER] }, facilitator: { url: { url: 'https://unused.example' } } }]).offers);
  const required = offers.paymentRequired('x402', { url: 'http://127.0.0.1/eth' })!;
  const client = x402Client.fromConfig({
    schemes: [{ network, client: new ExactEvmClientScheme(privateKeyToAccount(DEVNET_PAYER_KEY)) }],
    spendControls: { allowedAssets: [{ network, asset: coin.address }] },
  });
  const payload = await client.createPaymentPayload(required);
  return { header: encodePaymentSignatureHeader(payload), payload };
}

/** The key's paid balance and its top-ups, read from the store's file (no gateway on it). */
function paidOf(storePath: string): { paid: number; topUps: number } {
  const store = openSqliteStore({ path: storePath });
  try {
    return {
      paid: store.ledger.balance('acme', 0, new Date()).paidRemaining,
      topUps: store.db.prepare('SELECT COUNT(*) FROM top_ups WHERE key_id = ?').pluck().get('acme') as number,
    };
  } finally {
    store.close();
  }
}

async function crashCase(t: Test, mode: 'forward' | 'drop'): Promise<{ transaction: string | undefined; held: string | undefined }> {
  const relay = await startRelay(mode);
  t.teardown(() => relay.close());
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-pay-crash-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const storePath = join(dir, 'store.db');
  const config = {
    // No daily allowance: every call is paid for with bought credits.
    plans: { x402: { dailyCredits: 0, creditsPerSecond: 1_000_000, failover: false } },
    keys: [{ key: KEY, id: 'acme', plan: 'x402' }],
    networks: [{ name: 'eth', families: ['evm'], upstreams: [{ url: anvil.url }] }],
    plugins: {
      'ledger-sqlite': { path: storePath },
      payments: { offers: { x402: [OFFER] }, facilitator: { embedded: { rpcUrl: relay.url, settlementKey, confirmationTimeoutMs: 600_000 } } },
    },
  };
  const children: GatewayProcess[] = [];
  t.teardown(async () => { for (const child of children) await child.kill(); });
  const start = async (): Promise<GatewayProcess> => {
    const child = await startGatewayProcess({ config, store: 'sqlite', payments: true });
    children.push(child);
    return child;
  };

  const before = { payer: await balanceOf(DEVNET_PAYER_ADDRESS), payTo: await balanceOf(payTo) };
  const { header, payload } = await signedPayment();
  const nonce = (payload.payload as { authorization: { nonce: Hex } }).authorization.nonce;
  const id = paymentIdOf(network, coin.address, DEVNET_PAYER_ADDRESS, nonce);
  const first = await start();
  const unpaid = await post(`${first.origin}/eth/v3/${KEY}`, rpc('eth_blockNumber', []));
  t.equal(unpaid.status, 402, 'a key without credits is offered bundles');
  // The paying request: it never gets its answer (the gateway dies while its settle is in flight).
  const paying = request(`${first.origin}/eth/v3/${KEY}`, { method: 'POST', headers: { 'content-type': 'application/json', 'payment-signature': header }, body: JSON.stringify(rpc('eth_blockNumber', [])) })
    .then(async (res) => ({ status: res.statusCode, body: await res.body.text() }), (error: Error) => ({ status: 0, body: error.message }));

  const db = new Database(storePath);
  t.teardown(() => db.close());
  db.pragma('busy_timeout = 5000');
  const journal = new SqlitePaymentJournal(db);
  await until('the journal holds the payment as settling and the relay holds its transaction', async () => (await journal.get(id))?.state === 'settling' && relay.held.length === 1, 60_000);
  const held = relay.held[0]!.answer?.result;
  t.equal(await used(DEVNET_PAYER_ADDRESS, nonce), mode === 'forward', mode === 'forward' ? 'the transfer is on chain, the gateway does not know it' : 'nothing was sent');
  await first.kill();
  t.equal((await paying).status, 0, 'the paying request got no answer');
  t.same(paidOf(storePath), { paid: 0, topUps: 0 }, 'killed before any credit');
  t.match(await journal.get(id), { state: 'settling', payload }, 'the entry survived the kill, with the signed authorization');

  relay.release();
  const second = await start();
  const after = await journal.get(id);
  t.equal(after?.state, 'credited', 'credited by the recovery at start');
  t.equal(await used(DEVNET_PAYER_ADDRESS, nonce), true);
  t.equal(await balanceOf(DEVNET_PAYER_ADDRESS), before.payer - PRICE, 'the payer paid once');
  t.equal(await balanceOf(payTo), before.payTo + PRICE, 'payTo received once');
  const served = await post(`${second.origin}/eth/v3/${KEY}`, rpc('eth_blockNumber', []));
  t.equal(served.status, 200, 'the key\'s calls are served on the bought credits');
  const again = await post(`${second.origin}/eth/v3/${KEY}`, rpc('eth_blockNumber', []), { 'content-type': 'application/json', 'payment-signature': header });
  t.equal(again.status, 402, 'the same payment sent again buys nothing');
  await second.stop();
  t.same(paidOf(storePath), { paid: CREDITS - COST, topUps: 1 }, 'the bundle was credited once, and one call spent from it');

  const third = await start();
  await third.stop();
  t.same(paidOf(storePath), { paid: CREDITS - COST, topUps: 1 }, 'a further start credits nothing more');
  t.equal(await balanceOf(DEVNET_PAYER_ADDRESS), before.payer - PRICE);
  return { transaction: after?.transaction, held };
}

t.test('kill -9 after the transfer was sent and before the gateway heard of it: the restart finds it on chain and credits it once', async (t) => {
  const { transaction, held } = await crashCase(t, 'forward');
  t.match(held, /^0x[0-9a-f]{64}$/);
  t.equal(transaction, held, 'the journal holds the transaction of the AuthorizationUsed log: the one Anvil mined');
  t.equal((await reader.getTransactionReceipt({ hash: held as Hex })).status, 'success');
});

t.test('kill -9 before the transfer reached the chain: the restart settles the still-valid authorization, once', async (t) => {
  const { transaction, held } = await crashCase(t, 'drop');
  t.equal(held, undefined);
  t.equal((await reader.getTransactionReceipt({ hash: transaction as Hex })).status, 'success', 'settled by the restart');
});
