import t from 'tap';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { decompress } from '@mongodb-js/zstd';
import { address, createSolanaRpc, isSolanaError, SOLANA_ERROR__JSON_RPC__INVALID_PARAMS, SOLANA_ERROR__JSON_RPC__SERVER_ERROR_MIN_CONTEXT_SLOT_NOT_REACHED, type Address } from '@solana/kit';
import { Tokens } from '../core/plugin-api.js';
import { type CreditLedger } from '../core/store-api.js';
import { startExampleGateway } from './helpers/example-gateway.js';
import { conformanceDir } from './helpers/fixtures.js';
import { post, rpc } from './helpers/json-rpc.js';
import { openWs } from './helpers/ws-client.js';
import { until } from './helpers/until.js';

// @solana/kit's RPC client against the bundled gateway fronting the embedded LiteSVM node.
const gw = await startExampleGateway();
t.teardown(() => gw.close());
const url = gw.url('solana-devnet', gw.key);
const solana = createSolanaRpc(url);
const node = gw.devnet.solanaInstance('litesvm')!.node;
const seed = gw.devnet.getSolanaSeed();
const ledger = gw.gateway.container.resolve<CreditLedger>(Tokens.CreditLedger);
const used = async (): Promise<number> => (await ledger.balance('demo', 1_000_000_000, new Date())).used;

// --- The kit fixtures of the conformance folder, loaded into the VM with their exact fields -------
const fixtureDir = join(conformanceDir, 'solana', 'kit-fixtures');
interface Fixture { pubkey: string; account: { lamports: number; data: [string, string]; owner: string; executable: boolean }; rentEpoch: bigint }
const fixtures = new Map<string, Fixture>();
for (const file of readdirSync(fixtureDir).filter((f) => f.endsWith('.json'))) {
  const text = readFileSync(join(fixtureDir, file), 'utf8');
  const parsed = JSON.parse(text) as Omit<Fixture, 'rentEpoch'>;
  // u64::MAX has no exact double: read the rent epoch from the text itself.
  const rentEpoch = BigInt(/"rentEpoch"\s*:\s*(\d+)/.exec(text)![1]!);
  fixtures.set(parsed.pubkey, { ...parsed, rentEpoch });
  node.setAccount(parsed.pubkey, {
    lamports: parsed.account.lamports,
    data: Buffer.from(parsed.account.data[0], 'base64'),
    owner: parsed.account.owner,
    executable: parsed.account.executable,
    rentEpoch,
  });
}
const TEST_DATA = address('GQE2yjns7SKKuMc89tveBDpzYHwXfeuB2PGAbGaPWc6G');
const LOOKUP_TABLE = address('2JPQuT3dHtPjrdcbUQyrrT4XYRYaWpWfmAJ54SUapg6n');
const NOT_THERE = address('Bb39jXh8b1rWHymSqM46kKXYwzA35ChNZAMCZ3wSDAMV');

t.test('the kit fixture "test data" account, in every encoding, as kit expects it from a validator', async (t) => {
  const base = { executable: false, lamports: 5000000n, owner: '11111111111111111111111111111111', rentEpoch: 18446744073709551615n, space: 9n };
  const plain = await solana.getAccountInfo(TEST_DATA).send();
  t.same(plain.value, { ...base, data: '2Uw1bpnsXxu3e' }, 'no encoding: the legacy bare base58 string');
  t.equal(typeof plain.context.slot, 'bigint');
  t.same((await solana.getAccountInfo(TEST_DATA, { encoding: 'base58' }).send()).value, { ...base, data: ['2Uw1bpnsXxu3e', 'base58'] });
  t.same((await solana.getAccountInfo(TEST_DATA, { encoding: 'base64' }).send()).value, { ...base, data: ['dGVzdCBkYXRh', 'base64'] });
  t.same((await solana.getAccountInfo(TEST_DATA, { encoding: 'base64+zstd' }).send()).value, { ...base, data: ['KLUv/QBYSQAAdGVzdCBkYXRh', 'base64+zstd'] }, 'the very zstd frame agave writes');
  t.same((await solana.getAccountInfo(TEST_DATA, { encoding: 'jsonParsed' }).send()).value, { ...base, data: ['dGVzdCBkYXRh', 'base64'] }, 'no parser: base64 fallback');
  t.same((await solana.getAccountInfo(TEST_DATA, { encoding: 'base64', dataSlice: { length: 5, offset: 0 } }).send()).value?.data, ['dGVzdCA=', 'base64']);
  for (const commitment of ['confirmed', 'finalized', 'processed'] as const) {
    t.same((await solana.getAccountInfo(TEST_DATA, { commitment }).send()).value, { ...base, data: '2Uw1bpnsXxu3e' }, commitment);
  }
});

t.test('the kit fixture address lookup table parses as agave parses it', async (t) => {
  const fixture = fixtures.get(LOOKUP_TABLE)!;
  const raw = Buffer.from(fixture.account.data[0], 'base64');
  const { value } = await solana.getAccountInfo(LOOKUP_TABLE, { encoding: 'jsonParsed' }).send();
  t.equal(value?.owner, 'AddressLookupTab1e1111111111111111111111111');
  t.equal(value?.space, 1304n);
  t.equal((value as unknown as { rentEpoch: bigint }).rentEpoch, 0n, 'rentEpoch is on the wire (kit 8 no longer types it)');
  t.equal(value?.lamports, 10290815n);
  const data = value?.data as unknown as { program: string; space: bigint; parsed: { type: string; info: Record<string, unknown> & { addresses: string[] } } };
  t.equal(data.program, 'address-lookup-table');
  t.equal(data.space, 1304n);
  t.equal(data.parsed.type, 'lookupTable');
  const { addresses, ...meta } = data.parsed.info;
  t.same(meta, { deactivationSlot: '204699277', lastExtendedSlot: '204699234', lastExtendedSlotStartIndex: 20, authority: '4msgK65vdz5ADUAB3eTQGpF388NuQUAoknLxutUQJd5B' }, 'slots as strings, as kit expects');
  t.equal(addresses.length, (raw.length - 56) / 32);
  t.equal(addresses[0], 'F1Vc6AGoxXLwGB7QV8f4So3C5d8SXEk3KKGHxKGEJ8qn');
  t.equal(addresses[19], 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA');
  t.equal(addresses.at(-1), 'FoNprxYzYmwnYzhM964CxEHchhj17YREieJtSAXg9FMU');
});

t.test('the conformance folder\'s recorded getAccountInfo exchange', async (t) => {
  const lines = readFileSync(join(conformanceDir, 'solana', 'getAccountInfo.txt'), 'utf8').split('\n');
  const request = JSON.parse(lines.find((l) => l.startsWith('--> {"jsonrpc"'))!.slice(4)) as { params: [string, unknown] };
  const responseText = lines.find((l) => l.startsWith('<-- '))!.slice(4);
  const recorded = JSON.parse(responseText) as { result: { value: Record<string, unknown> } };
  node.setAccount(request.params[0], { lamports: recorded.result.value.lamports as number, owner: recorded.result.value.owner as string, rentEpoch: 18446744073709551615n });
  const res = await post(url, request);
  t.match(res.text, /"rentEpoch":18446744073709551615[,}]/, 'u64::MAX reaches the client digit for digit');
  const answer = res.json as { result: { context: { slot: number; apiVersion: string }; value: Record<string, unknown> } };
  t.same({ ...answer.result.value, rentEpoch: 0 }, { ...recorded.result.value, rentEpoch: 0 }, 'the same account value as the recording');
  t.type(answer.result.context.slot, 'number');
  t.type(answer.result.context.apiVersion, 'string');
});

t.test('the seeded accounts: a token mint and account, a program, and base64+zstd decoded back', async (t) => {
  const mint = await solana.getAccountInfo(seed.mint.address as Address, { encoding: 'jsonParsed' }).send();
  t.same((mint.value?.data as unknown as { parsed: unknown }).parsed, {
    type: 'mint',
    info: { mintAuthority: seed.wallet.address, supply: '1000000000000', decimals: 6, isInitialized: true, freezeAuthority: null },
  });
  const account = await solana.getAccountInfo(seed.tokenAccount.address as Address, { encoding: 'jsonParsed' }).send();
  t.same((account.value?.data as unknown as { program: string; parsed: unknown }).parsed, {
    type: 'account',
    info: { mint: seed.mint.address, owner: seed.wallet.address, tokenAmount: { uiAmount: 1234.56789, decimals: 6, amount: '1234567890', uiAmountString: '1234.56789' }, state: 'initialized', isNative: false },
  });
  const program = await solana.getAccountInfo(seed.program.address as Address, { encoding: 'base64' }).send();
  t.equal(program.value?.executable, true, 'the program account is executable');
  for (const target of [seed.largeProgram, seed.tokenAccount, seed.dataAccount]) {
    const zipped = await solana.getAccountInfo(target.address as Address, { encoding: 'base64+zstd' }).send();
    const [text, encoding] = zipped.value!.data as unknown as [string, string];
    t.equal(encoding, 'base64+zstd');
    t.same(await decompress(Buffer.from(text, 'base64')), Buffer.from(target.data), `${target.address}: decompressed bytes equal the account's`);
    const sliced = await solana.getAccountInfo(target.address as Address, { encoding: 'base64+zstd', dataSlice: { offset: 3, length: 7 } }).send();
    t.same(await decompress(Buffer.from((sliced.value!.data as unknown as [string])[0], 'base64')), Buffer.from(target.data.subarray(3, 10)), 'sliced, then compressed');
  }
});

t.test('dataSlice, base58 size limit, and a missing account', async (t) => {
  const sliced = await solana.getAccountInfo(seed.dataAccount.address as Address, { encoding: 'base64', dataSlice: { offset: 9, length: 100 } }).send();
  t.same(sliced.value?.data, [Buffer.from('seed').toString('base64'), 'base64'], 'a length past the end stops at the end');
  t.equal(sliced.value?.space, 13n, 'space is the full size');
  const past = await solana.getAccountInfo(seed.dataAccount.address as Address, { encoding: 'base58', dataSlice: { offset: 50, length: 1 } }).send();
  t.same(past.value?.data, ['', 'base58']);
  const big = await solana.getAccountInfo(seed.largeProgram.address as Address, { encoding: 'base58' }).send().catch((e: unknown) => e);
  t.ok(isSolanaError(big), 'base58 of 2,304 bytes is refused');
  t.match((big as { context: { __code: number } }).context.__code, -32600);
  const window = await solana.getAccountInfo(seed.largeProgram.address as Address, { encoding: 'base58', dataSlice: { offset: 0, length: 128 } }).send();
  t.equal((window.value?.data as unknown as string[])[1], 'base58', 'a 128-byte slice of it is allowed');
  t.equal((await solana.getAccountInfo(NOT_THERE).send()).value, null);
  t.equal((await solana.getAccountInfo(NOT_THERE, { encoding: 'jsonParsed' }).send()).value, null);
});

t.test('minContextSlot: reached, and not reached (-32016 with the context slot)', async (t) => {
  const slot = await solana.getSlot({ commitment: 'processed' }).send();
  const reached = await solana.getAccountInfo(TEST_DATA, { commitment: 'processed', minContextSlot: slot }).send();
  t.ok(reached.context.slot >= slot);
  // kit's default config refuses to send integers past 2^53 - 1 itself.
  const error = await solana.getAccountInfo(TEST_DATA, { minContextSlot: BigInt(Number.MAX_SAFE_INTEGER) }).send().catch((e: unknown) => e);
  t.ok(isSolanaError(error, SOLANA_ERROR__JSON_RPC__SERVER_ERROR_MIN_CONTEXT_SLOT_NOT_REACHED), 'kit recognises the node\'s -32016');
  t.type((error as { context: { contextSlot: unknown } }).context.contextSlot, 'bigint');
  // u64 2^63 - 1 as kit's own validator test sends it, written raw.
  const raw = await post(url, `{"jsonrpc":"2.0","id":7,"method":"getAccountInfo","params":["${TEST_DATA}",{"minContextSlot":9223372036854775807}]}`);
  t.same((raw.json as { error: unknown }).error, { code: -32016, message: 'Minimum context slot has not been reached', data: { contextSlot: (raw.json as { error: { data: { contextSlot: number } } }).error.data.contextSlot } });
  const before = await solana.getSlot({ commitment: 'processed' }).send();
  await t.resolves(until('the processed slot advances', async () => (await solana.getSlot({ commitment: 'processed' }).send()) > before), 'slots advance');
});

t.test('bad params are refused with -32602 before reaching the node, and cost nothing', async (t) => {
  const before = await used();
  const cases: Array<[string, unknown[]]> = [
    ['bad base58', ['0OIl' + TEST_DATA.slice(4)]],
    ['too short', ['GQE2yjns7SKKuMc89tve']],
    ['decodes to 33 bytes', ['z'.repeat(44)]],
    ['decodes to 24 bytes', ['2'.repeat(32)]],
    ['dataSlice with jsonParsed', [TEST_DATA, { encoding: 'jsonParsed', dataSlice: { offset: 0, length: 1 } }]],
    ['unknown encoding', [TEST_DATA, { encoding: 'hex' }]],
    ['unknown commitment', [TEST_DATA, { commitment: 'max' }]],
    ['negative minContextSlot', [TEST_DATA, { minContextSlot: -1 }]],
    ['dataSlice without length', [TEST_DATA, { dataSlice: { offset: 0 } }]],
    ['no address', []],
    ['three params', [TEST_DATA, {}, 1]],
  ];
  for (const [what, params] of cases) {
    const res = await post(url, rpc('getAccountInfo', params));
    const error = (res.json as { error?: { code: number; message: string } }).error;
    t.equal(error?.code, -32602, `${what}: ${error?.message}`);
  }
  t.match((await post(url, rpc('getAccountInfo', ['z'.repeat(44)]))).json, { error: { message: /does not decode to 32 bytes/ } });
  t.match((await post(url, rpc('getAccountInfo', [TEST_DATA, { encoding: 'jsonParsed', dataSlice: { offset: 0, length: 1 } }]))).json, { error: { message: /dataSlice is only allowed with the base58, base64 and base64\+zstd encodings/ } });
  const kitError = await solana.getAccountInfo(TEST_DATA, { encoding: 'jsonParsed', dataSlice: { offset: 0, length: 1 } } as never).send().catch((e: unknown) => e);
  t.ok(isSolanaError(kitError, SOLANA_ERROR__JSON_RPC__INVALID_PARAMS), 'kit sees INVALID_PARAMS');
  t.equal(await used(), before, 'every refusal was free (the decode check runs after metering and is refunded)');
  const accepted = await post(url, rpc('getAccountInfo', [TEST_DATA, { encoding: 'base64', somethingNew: true, commitment: null }]));
  t.ok((accepted.json as { result?: unknown }).result, 'unknown config fields and null options pass, as agave accepts them');
});

t.test('getClusterNodes with params [] and without params', async (t) => {
  const expected = ['clientId', 'featureSet', 'gossip', 'pubkey', 'pubsub', 'rpc', 'serveRepair', 'shredVersion', 'tpu', 'tpuForwards', 'tpuForwardsQuic', 'tpuQuic', 'tpuVote', 'tvu', 'version'];
  for (const request of [rpc('getClusterNodes', []), rpc('getClusterNodes')]) {
    const res = await post(url, request);
    const [nodeInfo] = (res.json as { result: Array<Record<string, unknown>> }).result;
    t.same(Object.keys(nodeInfo!).sort(), expected, `params ${'params' in request ? '[]' : 'absent'}`);
    t.match(nodeInfo, { pubkey: /^[1-9A-HJ-NP-Za-km-z]{32,44}$/, gossip: /^127\.0\.0\.1:\d+$/, rpc: /^127\.0\.0\.1:\d+$/, version: /^\d+\.\d+\.\d+$/, tpu: null, pubsub: /^127\.0\.0\.1:\d+$/ });
    t.type(nodeInfo!.featureSet, 'number');
    t.type(nodeInfo!.shredVersion, 'number');
  }
  const nodes = await solana.getClusterNodes().send();
  t.equal(nodes.length, 1);
  const withParam = await post(url, rpc('getClusterNodes', [1]));
  t.equal((withParam.json as { error: { code: number } }).error.code, -32602, 'a parameter is refused');
});

t.test('credits: 160 for getAccountInfo and getClusterNodes, 5 for the health calls; a node error is an answer', async (t) => {
  const charge = async (request: unknown): Promise<number> => {
    const before = await used();
    await post(url, request);
    return (await used()) - before;
  };
  t.equal(await charge(rpc('getAccountInfo', [TEST_DATA, { encoding: 'base64' }])), 160);
  t.equal(await charge(rpc('getAccountInfo', [NOT_THERE])), 160, 'a missing account is an answer too');
  t.equal(await charge(rpc('getClusterNodes')), 160);
  t.equal(await charge(rpc('getClusterNodes', [])), 160);
  t.equal(await charge(rpc('getHealth')), 5);
  t.equal(await charge(rpc('getSlot', [{ commitment: 'confirmed' }])), 5);
  t.equal(await charge(rpc('getVersion')), 5);
  t.equal(await charge(rpc('getAccountInfo', [TEST_DATA, { minContextSlot: 1e15 }])), 160, '-32016 comes from the node: charged like a revert');
  t.equal(await charge([rpc('getAccountInfo', [TEST_DATA], 1), rpc('getClusterNodes', [], 2)]), 320, 'a batch charges per call');
});

t.test('health calls answer as a Solana node does', async (t) => {
  t.equal(await solana.getHealth().send(), 'ok');
  const version = await solana.getVersion().send();
  t.match(version, { 'solana-core': /^\d+\.\d+\.\d+$/ });
  t.type(version['feature-set'], 'number');
  t.type(await solana.getSlot().send(), 'bigint');
});

t.test('the Solana methods are offered over HTTP only: over WebSocket they do not exist', async (t) => {
  const ws = await openWs(`${gw.origin.replace('http', 'ws')}/solana-devnet/ws/v3/${gw.key}`);
  t.teardown(() => ws.close());
  ws.send(rpc('getAccountInfo', [TEST_DATA], 1));
  ws.send(rpc('getClusterNodes', [], 2));
  const [first, second] = (await ws.waitFor(2)) as Array<{ id: number; error: { code: number; message: string } }>;
  for (const answer of [first!, second!]) t.equal(answer.error.code, -32601, answer.error.message);
});
