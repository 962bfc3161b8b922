import t from 'tap';
import { address, createSolanaRpc, generateKeyPairSigner, isSolanaError, lamports, type Signature } from '@solana/kit';
import { Connection, Keypair, LAMPORTS_PER_SOL, PublicKey, SystemProgram, Transaction } from '@solana/web3.js';
import { LiteSvmNode, startLiteSvmServer, SYSTEM_PROGRAM_ID } from '@tollgate/devnet';
import { Tokens } from '../core/plugin-api.js';
import { type CreditLedger } from '../core/store-api.js';
import { httpTransport } from '../plugins/http/index.js';
import { solanaFamily, SOLANA_CREDITS } from '../plugins/solana/index.js';
import { createSolanaFamily } from '../plugins/solana/family.js';
import { firstSignature } from '../plugins/solana/transaction-signature.js';
import bs58 from 'bs58';
import { startTestGateway } from './helpers/gateway.js';
import { startCountingRelay } from './helpers/counting-relay.js';
import { post, rpc } from './helpers/json-rpc.js';
import { signTransfer } from './helpers/solana-transfer.js';
import { until } from './helpers/until.js';

// The Solana HTTP method set through the gateway, in front of the devnet's LiteSVM node over real HTTP,
// with @solana/kit and @solana/web3.js as a dApp uses them. Slots move only when the test moves them.
const node = new LiteSvmNode({ slotMs: 0, startSlot: 1000 });
t.teardown(() => node.stop());
const server = await startLiteSvmServer({ node });
t.teardown(() => server.stop());
const relay = await startCountingRelay(server.url);
t.teardown(() => relay.close());
const KEY = 'solana-methods-key-0001';
const gw = await startTestGateway(
  {
    plans: { big: { dailyCredits: 1e12, creditsPerSecond: 1e9, failover: false } },
    keys: [{ key: KEY, id: 'dapp', plan: 'big' }],
    networks: [
      { name: 'sol', families: ['solana'], upstreams: [{ url: relay.url }], options: { solana: { airdrop: true } } },
      { name: 'mainnet', families: ['solana'], upstreams: [{ url: relay.url }], options: { solana: { commitment: 'confirmed' } } },
    ],
    failover: { probe: { intervalMs: 0, timeoutMs: 1_000 } },
  },
  [httpTransport(), solanaFamily({ programAccountsMaxResults: 3 })],
);
t.teardown(() => gw.close());
const url = gw.url('sol', KEY);
const kit = createSolanaRpc(url);
const ledger = gw.gateway.container.resolve<CreditLedger>(Tokens.CreditLedger);
const used = async (): Promise<number> => (await ledger.balance('dapp', 1e12, new Date(gw.gateway.clock.now()))).used;

/** The error a raw call gets, or its result. */
async function call(method: string, params: unknown[], network = 'sol'): Promise<{ result?: unknown; error?: { code: number; message: string } }> {
  return (await post(gw.url(network, KEY), rpc(method, params))).json as { result?: unknown; error?: { code: number; message: string } };
}

/** Waits (moving slots) until `signature` is confirmed on the node. */
async function confirmed(signature: string): Promise<void> {
  await until(`${signature} confirmed`, async () => {
    node.advance(1);
    const { value } = await kit.getSignatureStatuses([signature as Signature]).send();
    return value[0]?.confirmationStatus === 'confirmed' || value[0]?.confirmationStatus === 'finalized';
  });
}

const ISSUE_METHODS = `getAccountInfo getBalance getBlock getBlockCommitment getBlockHeight getBlockProduction getBlocks getBlocksWithLimit
  getBlockTime getClusterNodes getEpochInfo getEpochSchedule getFeeForMessage getFirstAvailableBlock getGenesisHash getHealth
  getHighestSnapshotSlot getIdentity getInflationGovernor getInflationRate getInflationReward getLargestAccounts getLatestBlockhash
  getLeaderSchedule getMaxRetransmitSlot getMaxShredInsertSlot getMinimumBalanceForRentExemption getMultipleAccounts getProgramAccounts
  getRecentPerformanceSamples getRecentPrioritizationFees getSignaturesForAddress getSignatureStatuses getSlot getSlotLeader getSlotLeaders
  getStakeMinimumDelegation getSupply getTokenAccountBalance getTokenAccountsByDelegate getTokenAccountsByOwner getTokenLargestAccounts
  getTokenSupply getTransaction getTransactionCount getVersion getVoteAccounts isBlockhashValid minimumLedgerSlot requestAirdrop
  sendTransaction simulateTransaction`.split(/\s+/);

t.test('the family defines the 52 HTTP methods, priced on the scale, the spec\'s two at 160, writes never sent twice', async (t) => {
  // Request/response methods (HTTP); the subscription methods, WebSocket only, have their own prices and tests.
  const methods = new Map(createSolanaFamily().methods.filter((m) => m.transports?.includes('http') ?? true).map((m) => [m.name, m]));
  t.equal(ISSUE_METHODS.length, 52);
  t.same([...methods.keys()].sort(), [...ISSUE_METHODS].sort());
  t.equal(methods.get('getAccountInfo')!.credits, 160);
  t.equal(methods.get('getClusterNodes')!.credits, 160);
  const tiers = new Set<number>(Object.values(SOLANA_CREDITS));
  for (const method of methods.values()) t.ok(tiers.has(method.credits), `${method.name} is priced on the scale`);
  for (const name of ['sendTransaction', 'requestAirdrop']) t.same([methods.get(name)!.idempotent, methods.get(name)!.failover], [false, false], name);
  t.same([methods.get('simulateTransaction')!.idempotent, methods.get('simulateTransaction')!.credits], [true, SOLANA_CREDITS.simulate], 'simulateTransaction is a read');
});

t.test('a kit dApp: reads, an airdrop, a simulated then sent transfer, history; each call charged its price', async (t) => {
  const payer = await generateKeyPairSigner();
  const recipient = await generateKeyPairSigner();
  const before = await used();
  let expected = 0;
  const priced = <T>(credits: number, value: T): T => { expected += credits; return value; };

  const epoch = priced(SOLANA_CREDITS.status, await kit.getEpochInfo().send());
  t.ok(epoch.absoluteSlot >= node.slot('finalized'), 'epoch info');
  t.equal(priced(SOLANA_CREDITS.status, await kit.getMinimumBalanceForRentExemption(0n).send()), node.rentExemptMinimum(0));
  t.equal(typeof priced(SOLANA_CREDITS.status, await kit.getBlockHeight({ commitment: 'processed' }).send()), 'bigint');
  const airdrop = priced(SOLANA_CREDITS.write, await kit.requestAirdrop(payer.address, lamports(2_000_000_000n)).send());
  await confirmed(airdrop);
  // Each poll of the confirmation is a getSignatureStatuses call, charged as one.
  expected += SOLANA_CREDITS.oneRead * relay.count('getSignatureStatuses');
  const polled = relay.count('getSignatureStatuses');
  t.equal((priced(SOLANA_CREDITS.oneRead, await kit.getBalance(payer.address, { commitment: 'confirmed' }).send())).value, 2_000_000_000n);

  const { value: blockhash } = priced(SOLANA_CREDITS.chainState, await kit.getLatestBlockhash({ commitment: 'confirmed' }).send());
  const transfer = await signTransfer(payer, recipient.address, 1_000_000n, blockhash);
  const simulation = priced(SOLANA_CREDITS.simulate, await kit.simulateTransaction(transfer.base64 as never, { encoding: 'base64', sigVerify: true }).send());
  t.equal(simulation.value.err, null, 'simulated first');
  const sent = priced(SOLANA_CREDITS.write, await kit.sendTransaction(transfer.base64 as never, { encoding: 'base64' }).send());
  t.equal(sent, transfer.signature, 'answered with its signature');
  await confirmed(sent);
  expected += SOLANA_CREDITS.oneRead * (relay.count('getSignatureStatuses') - polled);

  const accounts = priced(SOLANA_CREDITS.list, await kit.getMultipleAccounts([payer.address, recipient.address, address(SYSTEM_PROGRAM_ID)], { commitment: 'confirmed' }).send());
  t.equal(accounts.value[1]?.lamports, 1_000_000n, 'the recipient got the transfer');
  const history = priced(SOLANA_CREDITS.list, await kit.getSignaturesForAddress(recipient.address, { commitment: 'confirmed' }).send());
  t.same(history.map((h) => h.signature), [sent]);
  const landed = priced(SOLANA_CREDITS.oneRead, await kit.getTransaction(sent, { commitment: 'confirmed', maxSupportedTransactionVersion: 0, encoding: 'json' }).send());
  t.equal(landed?.transaction.signatures[0], sent);
  const block = priced(SOLANA_CREDITS.list, await kit.getBlock(landed!.slot, { commitment: 'confirmed', maxSupportedTransactionVersion: 0, transactionDetails: 'signatures', rewards: false }).send());
  t.ok(block?.signatures?.includes(sent), 'the block holds the transaction');
  const blocks = priced(SOLANA_CREDITS.list, await kit.getBlocks(landed!.slot, landed!.slot + 1n, { commitment: 'confirmed' }).send());
  t.ok(blocks.includes(landed!.slot));
  t.equal(await used() - before, expected, 'every answered call charged its price, nothing else');
});

t.test('a web3.js Connection: balance, blockhash, a transfer sent raw and its status', async (t) => {
  const connection = new Connection(url, { commitment: 'confirmed' });
  const payer = Keypair.generate();
  const airdrop = await connection.requestAirdrop(payer.publicKey, LAMPORTS_PER_SOL);
  await confirmed(airdrop);
  t.equal(await connection.getBalance(payer.publicKey), LAMPORTS_PER_SOL);
  const to = Keypair.generate().publicKey;
  const { blockhash, lastValidBlockHeight } = await connection.getLatestBlockhash();
  const tx = new Transaction({ feePayer: payer.publicKey, blockhash, lastValidBlockHeight }).add(SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: to, lamports: 5_000_000 }));
  tx.sign(payer);
  const signature = await connection.sendRawTransaction(tx.serialize());
  await confirmed(signature);
  t.equal((await connection.getSignatureStatus(signature)).value?.err, null);
  t.equal(await connection.getBalance(to), 5_000_000);
  t.equal((await connection.getMultipleAccountsInfo([to, new PublicKey(SYSTEM_PROGRAM_ID)]))[0]?.lamports, 5_000_000);
});

t.test('limits: refused before the node is asked, and uncharged', async (t) => {
  const before = await used();
  const keys = Array.from({ length: 101 }, () => SYSTEM_PROGRAM_ID);
  const tooMany = await call('getMultipleAccounts', [keys]);
  t.match(tooMany.error, { code: -32602, message: /invalid argument 0 \(addresses\)/ }, 'getMultipleAccounts: at most 100 keys');
  t.equal(relay.count('getMultipleAccounts', [keys]), 0);
  t.match((await call('getSignaturesForAddress', [SYSTEM_PROGRAM_ID, { limit: 1001 }])).error, { code: -32602, message: /limit/ }, 'getSignaturesForAddress: limit at most 1,000');
  t.match((await call('getBlocks', [0, 500_001])).error, { code: -32602, message: 'invalid argument 1 (endSlot): Slot range too large; max 500000' }, 'getBlocks: a range of at most 500,000 slots');
  t.match((await call('getBlocksWithLimit', [0, 500_001])).error, { code: -32602 }, 'getBlocksWithLimit: at most 500,000');
  t.match((await call('getProgramAccounts', [SYSTEM_PROGRAM_ID, { filters: [{ dataSize: 0 }, { dataSize: 0 }, { dataSize: 0 }, { dataSize: 0 }, { dataSize: 0 }] }])).error, { code: -32602 }, 'getProgramAccounts: at most 4 filters');
  t.match((await call('getBalance', ['2'.repeat(33)])).error, { code: -32602, message: /does not decode to 32 bytes/ }, 'a key that is not 32 bytes');
  t.match((await call('getBlock', [1, { commitment: 'processed' }])).error, { code: -32602, message: 'invalid argument 1 (config): commitment must be one of "finalized", "confirmed", null' });
  t.equal(await used(), before, 'nothing charged');
});

t.test('getProgramAccounts: an answer beyond the result cap is -32005, uncharged', async (t) => {
  const owner = (await generateKeyPairSigner()).address;
  for (let i = 0; i < 4; i++) node.setAccount((await generateKeyPairSigner()).address, { lamports: 1_000_000, data: Buffer.alloc(i + 1), owner, executable: false });
  const before = await used();
  t.match((await call('getProgramAccounts', [owner])).error, { code: -32005, message: /more than 3 accounts; narrow it with filters/ });
  t.equal(await used(), before);
  const narrowed = await call('getProgramAccounts', [owner, { filters: [{ dataSize: 2 }], encoding: 'base64' }]);
  t.equal((narrowed.result as unknown[]).length, 1, 'a filtered query passes');
  t.equal(await used(), before + SOLANA_CREDITS.scan);
});

t.test('requestAirdrop is off unless the network enables it', async (t) => {
  const before = await used();
  const refused = await call('requestAirdrop', [SYSTEM_PROGRAM_ID, 1], 'mainnet');
  t.match(refused.error, { code: -32004, message: /requestAirdrop is not served on network mainnet/ });
  t.equal(await used(), before);
  const kitMainnet = createSolanaRpc(gw.url('mainnet', KEY));
  const thrown = await kitMainnet.requestAirdrop(address(SYSTEM_PROGRAM_ID), lamports(1n)).send().then(() => undefined, (e: unknown) => e);
  t.ok(isSolanaError(thrown), 'kit reads it as a JSON-RPC error');
});

t.test('a network\'s default commitment goes where the caller gave none, never over one it gave', async (t) => {
  const payer = (await generateKeyPairSigner()).address;
  await call('getBalance', [payer], 'mainnet');
  t.equal(relay.count('getBalance', [payer, { commitment: 'confirmed' }]), 1, 'none given: the network\'s');
  await call('getBalance', [payer, { commitment: 'processed' }], 'mainnet');
  t.equal(relay.count('getBalance', [payer, { commitment: 'processed' }]), 1, 'given: kept');
  await call('getBalance', [payer, { minContextSlot: 1 }], 'mainnet');
  t.equal(relay.count('getBalance', [payer, { minContextSlot: 1, commitment: 'confirmed' }]), 1, 'added to the config it gave');
  await call('getTransaction', ['1'.repeat(64), 'json'], 'mainnet');
  t.equal(relay.count('getTransaction', ['1'.repeat(64), { encoding: 'json', commitment: 'confirmed' }]), 1, 'the legacy bare encoding becomes a config');
  await call('getBalance', [payer], 'sol');
  t.equal(relay.count('getBalance', [payer]), 1, 'a network without a default sends the call as it came');
});

t.test('the same transaction sent twice is answered with its signature both times, and charged once', async (t) => {
  const payer = await generateKeyPairSigner();
  await confirmed(await kit.requestAirdrop(payer.address, lamports(1_000_000_000n)).send());
  const { value: blockhash } = await kit.getLatestBlockhash({ commitment: 'confirmed' }).send();
  const transfer = await signTransfer(payer, (await generateKeyPairSigner()).address, 1_000_000n, blockhash);
  const before = await used();
  const first = await call('sendTransaction', [transfer.base64, { encoding: 'base64' }]);
  node.advance(1);
  const again = await call('sendTransaction', [transfer.base64, { encoding: 'base64' }]);
  t.same([first.result, again.result], [transfer.signature, transfer.signature]);
  t.equal(await used() - before, SOLANA_CREDITS.write, 'charged once');
  const direct = (await post(server.url, rpc('sendTransaction', [transfer.base64, { encoding: 'base64' }]))).json as { error?: { code: number; message: string } };
  t.match(direct.error, { code: -32002, message: /already been processed/ }, 'what the node itself says to the second send');
});

t.test('a transaction\'s first signature is read from its wire bytes, base-64 or base-58', async (t) => {
  const payer = await generateKeyPairSigner();
  const transfer = await signTransfer(payer, (await generateKeyPairSigner()).address, 1n, { blockhash: node.latestBlockhash('processed').blockhash as never, lastValidBlockHeight: 1n });
  const bytes = Buffer.from(transfer.base64, 'base64');
  t.equal(firstSignature([transfer.base64, { encoding: 'base64' }]), transfer.signature);
  t.equal(firstSignature([bs58.encode(bytes)]), transfer.signature, 'base-58 by default');
  t.equal(firstSignature([bs58.encode(bytes), null]), transfer.signature);
  t.equal(firstSignature(['not base58 0OIl']), undefined, 'bytes that do not decode');
  t.equal(firstSignature([Buffer.from([0]).toString('base64'), { encoding: 'base64' }]), undefined, 'no signature');
  t.equal(firstSignature([Buffer.from([1, 2, 3]).toString('base64'), { encoding: 'base64' }]), undefined, 'fewer bytes than a signature');
});
