import t from 'tap';
import { httpTransport } from '../plugins/http/index.js';
import { solanaFamily } from '../plugins/solana/index.js';
import { responseCache } from '../plugins/cache/index.js';
import { CACHE_HEADER } from '../plugins/cache/response-cache.js';
import { LiteSvmNode, startLiteSvmServer, SYSTEM_PROGRAM_ID } from '@tollgate/devnet';
import { startTestGateway } from './helpers/gateway.js';
import { startCountingRelay } from './helpers/counting-relay.js';
import { post, rpc } from './helpers/json-rpc.js';

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
