import t from 'tap';
import { Connection, PublicKey, SolanaJSONRPCError, type AccountInfo, type ParsedAccountData } from '@solana/web3.js';
import { startExampleGateway } from './helpers/example-gateway.js';
import { post, rpc } from './helpers/json-rpc.js';

// @solana/web3.js v1 against the bundled gateway fronting the embedded LiteSVM node.
const gw = await startExampleGateway();
t.teardown(() => gw.close());
const url = gw.url('solana-devnet', gw.key);
const connection = new Connection(url, { disableRetryOnRateLimit: true });
const seed = gw.devnet.getSolanaSeed();
const key = (address: string): PublicKey => new PublicKey(address);

t.test('Connection.getAccountInfo: base64 by default, owner, lamports, executable, rent epoch', async (t) => {
  const info = await connection.getAccountInfo(key(seed.dataAccount.address));
  t.ok(info);
  t.same(info!.data, Buffer.from('tollgate-seed'));
  t.equal(info!.owner.toBase58(), '11111111111111111111111111111111');
  t.equal(info!.lamports, Number(seed.dataAccount.lamports));
  t.equal(info!.executable, false);
  t.equal(info!.rentEpoch, 18446744073709551615, 'u64::MAX, as a JS number can hold it');
  const program = await connection.getAccountInfo(key(seed.program.address));
  t.equal(program!.executable, true, 'the seeded program is executable');
  t.equal(program!.owner.toBase58(), 'BPFLoaderUpgradeab1e11111111111111111111111');
  t.equal(await connection.getAccountInfo(key(seed.missing)), null, 'a missing account is null');
});

t.test('Connection.getAccountInfo with dataSlice, commitment and minContextSlot', async (t) => {
  const sliced = await connection.getAccountInfo(key(seed.dataAccount.address), { dataSlice: { offset: 0, length: 8 }, commitment: 'confirmed' });
  t.same(sliced!.data, Buffer.from('tollgate'));
  const { context } = await connection.getAccountInfoAndContext(key(seed.wallet.address), { commitment: 'processed' });
  const reached = await connection.getAccountInfoAndContext(key(seed.wallet.address), { commitment: 'processed', minContextSlot: context.slot });
  t.ok(reached.context.slot >= context.slot, 'a reached minContextSlot answers');
  // getAccountInfo wraps the node's error in a plain Error; getAccountInfoAndContext keeps the SolanaJSONRPCError.
  const wrapped = await connection.getAccountInfo(key(seed.wallet.address), { minContextSlot: context.slot + 1_000_000 }).catch((e: Error) => e);
  t.match((wrapped as Error).message, /Minimum context slot has not been reached/);
  const error = await connection.getAccountInfoAndContext(key(seed.wallet.address), { minContextSlot: context.slot + 1_000_000 }).catch((e: unknown) => e);
  t.ok(error instanceof SolanaJSONRPCError);
  t.equal((error as SolanaJSONRPCError).code, -32016);
  t.match((error as SolanaJSONRPCError).message, /Minimum context slot has not been reached/);
});

t.test('Connection.getParsedAccountInfo: token mint and account, nonce, program, base64 fallback', async (t) => {
  const parsed = async (address: string): Promise<AccountInfo<Buffer | ParsedAccountData> | null> => (await connection.getParsedAccountInfo(key(address))).value;
  const mint = (await parsed(seed.mint.address))!.data as ParsedAccountData;
  t.equal(mint.program, 'spl-token');
  t.equal(mint.space, 82);
  t.same(mint.parsed, { type: 'mint', info: { mintAuthority: seed.wallet.address, supply: '1000000000000', decimals: 6, isInitialized: true, freezeAuthority: null } });
  const account = (await parsed(seed.tokenAccount.address))!.data as ParsedAccountData;
  t.match(account.parsed, { type: 'account', info: { mint: seed.mint.address, owner: seed.wallet.address, state: 'initialized', isNative: false, tokenAmount: { amount: '1234567890', decimals: 6, uiAmount: 1234.56789, uiAmountString: '1234.56789' } } });
  const nonce = (await parsed(seed.nonceAccount.address))!.data as ParsedAccountData;
  t.equal(nonce.program, 'nonce');
  t.match(nonce.parsed, { type: 'initialized', info: { authority: seed.wallet.address, feeCalculator: { lamportsPerSignature: '5000' } } });
  const program = (await parsed(seed.program.address))!.data as ParsedAccountData;
  t.same(program.parsed, { type: 'program', info: { programData: program.parsed.info.programData } });
  t.equal(program.program, 'bpf-upgradeable-loader');
  const wallet = await parsed(seed.wallet.address);
  t.same(wallet!.data, Buffer.alloc(0), 'a plain wallet has no parser: base64 ["", "base64"], which web3.js decodes');
  const raw = await post(url, rpc('getAccountInfo', [seed.wallet.address, { encoding: 'jsonParsed' }]));
  t.same((raw.json as { result: { value: { data: unknown } } }).result.value.data, ['', 'base64']);
  t.equal(await parsed(seed.missing), null);
});

t.test('Connection.getClusterNodes (params: [] as web3.js sends it)', async (t) => {
  const nodes = await connection.getClusterNodes();
  t.equal(nodes.length, 1);
  t.match(nodes[0], { pubkey: /^[1-9A-HJ-NP-Za-km-z]{32,44}$/, gossip: /^127\.0\.0\.1:\d+$/, rpc: /^127\.0\.0\.1:\d+$/, version: /^\d+\.\d+\.\d+$/, tpu: null });
  // web3.js types only the fields it validates; the others arrive untouched.
  const node = nodes[0] as unknown as Record<string, unknown>;
  t.type(node.featureSet, 'number');
  t.type(node.shredVersion, 'number');
  t.equal(node.clientId, 'Agave');
});

t.test('web3.js string ids are echoed; bad addresses never reach the node', async (t) => {
  const res = await post(url, { method: 'getAccountInfo', jsonrpc: '2.0', params: [seed.wallet.address, { encoding: 'base64' }], id: '8c8e3c3e-9a4a-4a8b-8d3e-0c1d2e3f4a5b' });
  t.equal((res.json as { id: string }).id, '8c8e3c3e-9a4a-4a8b-8d3e-0c1d2e3f4a5b');
  const error = await connection.getAccountInfoAndContext(key(seed.wallet.address), { dataSlice: { offset: -1, length: 1 } }).catch((e: unknown) => e);
  t.equal((error as SolanaJSONRPCError).code, -32602, 'a negative slice offset is -32602');
  const health = await post(url, rpc('getHealth'));
  t.equal((health.json as { result: string }).result, 'ok');
  t.equal(typeof (await connection.getSlot()), 'number');
  t.match(await connection.getVersion(), { 'solana-core': /^\d+\.\d+\.\d+$/ });
});
