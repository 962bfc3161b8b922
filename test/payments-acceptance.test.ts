/**
 * Issue 32's acceptance, end to end on Anvil over HTTP: a viem client whose `http` transport fetches
 * through `@x402/fetch`'s `wrapFetchWithPayment`, on a key with no credits, makes 100 calls; every one is
 * answered, the payer's tUSD fell and payTo's rose by exactly the bundles bought, and the key's credits
 * are what it bought less what it spent.
 */
import 'reflect-metadata';
import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createPublicClient, http, type Address } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { wrapFetchWithPayment, x402Client, decodePaymentResponseHeader } from '@x402/fetch';
import { DEVNET_PAYER_ADDRESS, DEVNET_PAYER_KEY, seedDevnet, startAnvil } from '@tollgate/devnet';
import { Tokens } from '../core/plugin-api.js';
import { httpTransport } from '../plugins/http/index.js';
import { evmFamily } from '../plugins/evm/index.js';
import { ledgerSqlite } from '../plugins/ledger-sqlite/index.js';
import { payments } from '../plugins/payments/index.js';
import { startTestGateway } from './helpers/gateway.js';

const anvil = await startAnvil();
t.teardown(() => anvil.stop());
const seed = await seedDevnet(anvil.url, { stablecoin: true });
const coin = seed.stablecoin!;
const network = `eip155:${anvil.chainId}` as const;
const reader = createPublicClient({ transport: http(anvil.url) });
const balanceOf = async (who: Address): Promise<bigint> => reader.readContract({ address: coin.address, abi: coin.artifact.abi as never, functionName: 'balanceOf', args: [who] } as never) as Promise<bigint>;

const settlementKey = generatePrivateKey();
await anvil.rpc('anvil_setBalance', [privateKeyToAccount(settlementKey).address, '0x56bc75e2d63100000']);
const payTo = privateKeyToAccount(generatePrivateKey()).address;
// A small bundle, so that 100 calls buy several.
const PRICE = 50_000n; // 0.05 tUSD
const BUNDLE = 1_000;
const KEY = 'agent-key-with-no-credits-0001';

const dir = mkdtempSync(join(tmpdir(), 'tollgate-x402-acceptance-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const gw = await startTestGateway(
  {
    networks: [{ name: 'eth', families: ['evm'], upstreams: [{ url: anvil.url }] }],
    plans: { agent: { dailyCredits: 0, creditsPerSecond: 100_000, failover: false } },
    keys: [{ key: KEY, id: 'agent', plan: 'agent' }],
    plugins: {
      'ledger-sqlite': { path: join(dir, 'tollgate.db') },
      payments: {
        offers: { agent: [{ credits: BUNDLE, price: PRICE.toString(), asset: coin.address, network, payTo, name: coin.name, version: coin.version }] },
        facilitator: { embedded: { rpcUrl: anvil.url, settlementKey } },
      },
    },
  },
  [ledgerSqlite(), httpTransport(), evmFamily(), payments()],
);
t.teardown(() => gw.close());
const ledger = gw.gateway.container.resolve(Tokens.CreditLedger);
const creditsOf = async (keyId: string): Promise<number> => {
  const balance = await ledger.balance(keyId, 0, new Date());
  return balance.remaining + balance.paidRemaining;
};

t.test('100 calls through @x402/fetch on a key with 0 credits: all answered, paid for exactly', async (t) => {
  t.equal(await creditsOf('agent'), 0, 'the key starts with no credits');
  const before = { payer: await balanceOf(DEVNET_PAYER_ADDRESS), payTo: await balanceOf(payTo) };

  // The settlements the client received, counted beneath the payment wrapper.
  const settlements: string[] = [];
  const seen: typeof fetch = async (input, init) => {
    const res = await fetch(input, init);
    const header = res.headers.get('payment-response');
    if (header !== null) settlements.push(decodePaymentResponseHeader(header).transaction);
    return res;
  };
  const client = x402Client.fromConfig({
    schemes: [{ network, client: new ExactEvmScheme(privateKeyToAccount(DEVNET_PAYER_KEY)) }],
    spendControls: { allowedAssets: [{ network, asset: coin.address }] },
  });
  const viem = createPublicClient({ transport: http(gw.url('eth', KEY), { fetchFn: wrapFetchWithPayment(seen, client), retryCount: 0 }) });

  const heads: bigint[] = [];
  for (let i = 0; i < 100; i++) heads.push(await viem.getBlockNumber({ cacheTime: 0 }));
  t.equal(heads.length, 100, '100 calls answered');
  const head = await reader.getBlockNumber();
  t.ok(heads.every((n) => n <= head && n > 0n), 'each with the chain\'s block number');

  const bundles = settlements.length;
  t.ok(bundles >= 2, `the client bought bundles as its credits ran out (${bundles})`);
  t.equal(new Set(settlements).size, bundles, 'each in a transaction of its own');
  for (const hash of settlements) t.equal((await reader.getTransactionReceipt({ hash: hash as `0x${string}` })).status, 'success');
  const paid = PRICE * BigInt(bundles);
  t.equal(await balanceOf(DEVNET_PAYER_ADDRESS), before.payer - paid, 'the payer\'s balance fell by exactly the bundles bought');
  t.equal(await balanceOf(payTo), before.payTo + paid, 'payTo\'s rose by exactly as much');
  const spent = 100 * gw.gateway.networks.get('eth')!.methods.get('eth_blockNumber')!.definition.credits;
  t.equal(await creditsOf('agent'), bundles * BUNDLE - spent, 'the key\'s credits = bought - spent');
});
