import t from 'tap';
import { httpTransport } from '../plugins/http/index.js';
import { solanaFamily } from '../plugins/solana/index.js';
import { responseCache } from '../plugins/cache/index.js';
import { CACHE_HEADER } from '../plugins/cache/response-cache.js';
import { LiteSvmNode, startLiteSvmServer, SYSTEM_PROGRAM_ID } from '@tollgate/devnet';
import { startTestGateway } from './helpers/gateway.js';
import { startCountingRelay } from './helpers/counting-relay.js';
import { post, rpc } from './helpers/json-rpc.js';
import { until } from './helpers/until.js';

// The cache in front of an embedded Solana node (LiteSVM over real HTTP): commitment decides.
const node = new LiteSvmNode();
t.teardown(() => node.stop());
const server = await startLiteSvmServer({ node });
t.teardown(() => server.stop());
const relay = await startCountingRelay(server.url);
t.teardown(() => relay.close());
const KEY = 'cache-solana-key-0001';
const gw = await startTestGateway(
  { keys: [{ key: KEY, plan: 'custom' }], networks: [{ name: 'solana', families: ['solana'], upstreams: [{ url: relay.url }] }] },
  [httpTransport(), solanaFamily(), responseCache()],
);
t.teardown(() => gw.close());
const url = gw.url('solana', KEY);

t.test('processed answers are never cached', async (t) => {
  const params = [SYSTEM_PROGRAM_ID, { commitment: 'processed' }];
  for (let i = 0; i < 2; i++) {
    const answer = await post(url, rpc('getAccountInfo', params, i));
    t.equal(answer.headers[CACHE_HEADER], undefined, 'not considered');
    t.ok((answer.json as { result?: unknown }).result, 'answered by the node');
  }
  t.equal(relay.count('getAccountInfo', params), 2);
});

t.test('getVersion is kept (60 s) and each client gets its own id; getHealth is always asked', async (t) => {
  const first = await post(url, rpc('getVersion', [], 1));
  const second = await post(url, rpc('getVersion', [], 2));
  t.equal(second.headers[CACHE_HEADER], 'hit');
  t.same(second.json, { ...(first.json as object), id: 2 });
  t.equal(relay.count('getVersion'), 1);
  await post(url, rpc('getHealth', []));
  await post(url, rpc('getHealth', []));
  t.equal(relay.count('getHealth'), 2, 'both reached the node (a single upstream gets no health probes)');
});

t.test('by finality: a finalized transaction is kept for good, a null, a blockhash and signature statuses never', async (t) => {
  // A transaction the node finalized: an airdrop asked of the node itself, then slots until it is final.
  const answer = (await post(server.url, rpc('requestAirdrop', ['CeJbFG6pZct9RTtydBP4rLprs6P91P34KxLXvyHEdbE9', 1_000_000_000]))).json as { result: string };
  const signature = answer.result;
  await until('the airdrop finalized', async () => {
    const status = (await post(server.url, rpc('getSignatureStatuses', [[signature]]))).json as { result: { value: Array<{ confirmationStatus?: string } | null> } };
    return status.result.value[0]?.confirmationStatus === 'finalized';
  });
  const params = [signature, { commitment: 'finalized', encoding: 'json', maxSupportedTransactionVersion: 0 }];
  const first = await post(url, rpc('getTransaction', params, 1));
  const second = await post(url, rpc('getTransaction', params, 2));
  t.equal(second.headers[CACHE_HEADER], 'hit', 'kept for good');
  t.same(second.json, { ...(first.json as object), id: 2 });
  t.equal(relay.count('getTransaction', params), 1);
  const missing = ['5'.repeat(87), { commitment: 'finalized' }];
  await post(url, rpc('getTransaction', missing));
  await post(url, rpc('getTransaction', missing));
  t.equal(relay.count('getTransaction', missing), 2, 'a null (not found yet) is never kept');
  for (const [method, asked] of [['getLatestBlockhash', [{ commitment: 'finalized' }]], ['getSignatureStatuses', [[signature]]]] as const) {
    await post(url, rpc(method, [...asked]));
    const again = await post(url, rpc(method, [...asked]));
    t.equal(again.headers[CACHE_HEADER], undefined, `${method}: not considered`);
    t.equal(relay.count(method, asked), 2, `${method}: both reached the node`);
  }
  await post(url, rpc('getGenesisHash', [], 1));
  t.equal((await post(url, rpc('getGenesisHash', [], 2))).headers[CACHE_HEADER], 'hit', 'the genesis hash is kept for good');
});

t.test('base-58 keys are case-sensitive in cache keys', async (t) => {
  const lower = ['tokenkegqfezyinwajbnbgkpfxcwubvf9ss623vq5da', { commitment: 'finalized' }];
  const upper = ['TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA', { commitment: 'finalized' }];
  const a = await post(url, rpc('getAccountInfo', upper));
  const b = await post(url, rpc('getAccountInfo', lower));
  t.not(b.headers[CACHE_HEADER], 'hit', 'another key, another entry');
  t.not(JSON.stringify((a.json as { result?: unknown }).result), JSON.stringify((b.json as { result?: unknown }).result));
  t.equal(relay.count('getAccountInfo', lower), 1, 'the other spelling reached the node');
});
