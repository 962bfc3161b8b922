import t from 'tap';
import { startLiteSvmInstance, rustF64 } from '@tollgate/devnet';
import { post, rpc } from './helpers/json-rpc.js';

// The embedded LiteSVM node on its own: the JSON-RPC envelope rules, and a clean stop.
const instance = await startLiteSvmInstance('litesvm#direct', { slotMs: 20 });
t.teardown(() => instance.stop());
const seed = instance.getSeed();

t.test('batches, notifications, parse errors and unknown methods as agave answers them', async (t) => {
  const batch = await post(instance.url, [rpc('getHealth', [], 1), { jsonrpc: '2.0', method: 'getSlot' }, rpc('nope', [], 3), rpc('getVersion', undefined, 'v')]);
  t.same(batch.json, [
    { jsonrpc: '2.0', result: 'ok', id: 1 },
    { jsonrpc: '2.0', error: { code: -32601, message: 'Method not found' }, id: 3 },
    { jsonrpc: '2.0', result: { 'solana-core': instance.node.version, 'feature-set': instance.node.featureSet }, id: 'v' },
  ], 'in order, the notification unanswered');
  t.match(batch.text, /^\[\{"jsonrpc":"2\.0","result":"ok","id":1\}/, 'jsonrpc, result, id: agave\'s member order');
  t.same((await post(instance.url, '{"jsonrpc":')).json, { jsonrpc: '2.0', error: { code: -32700, message: 'Parse error' }, id: null });
  t.same((await post(instance.url, [])).json, { jsonrpc: '2.0', error: { code: -32600, message: 'Invalid request' }, id: null });
  const notification = await post(instance.url, { jsonrpc: '2.0', method: 'getHealth' });
  t.equal(notification.text, '', 'a lone notification gets an empty answer');
  t.equal((await post(instance.url, '', {}, 'GET')).status, 405);
  t.equal((await post(instance.url.replace(/\/?$/, '/health'), '', {}, 'GET')).text, 'ok');
});

t.test('agave\'s own param errors', async (t) => {
  const error = async (params: unknown[] | undefined, method = 'getAccountInfo'): Promise<unknown> => ((await post(instance.url, rpc(method, params))).json as { error: unknown }).error;
  t.same(await error(['z'.repeat(44)]), { code: -32602, message: 'Invalid param: WrongSize' });
  t.same(await error(['0'.repeat(32)]), { code: -32602, message: 'Invalid param: Invalid' });
  t.same(await error([seed.wallet.address, { encoding: 'hex' }]), { code: -32602, message: 'Invalid params: unknown variant `hex`, expected one of `binary`, `base58`, `base64`, `jsonParsed`, `base64+zstd`.' });
  t.same(await error([1], 'getClusterNodes'), { code: -32602, message: 'Invalid parameters: No parameters were expected', data: 'Array([Number(1)])' });
  const typo = (await post(instance.url, rpc('getAccountInfo', [seed.wallet.address, { commitment: 'confimed' }]))).json as { result?: unknown };
  t.ok(typo.result, 'an unknown commitment silently means finalized, as agave\'s flattened serde option makes it');
  const jsonParsedSlice = (await post(instance.url, rpc('getAccountInfo', [seed.dataAccount.address, { encoding: 'jsonParsed', dataSlice: { offset: 0, length: 4 } }]))).json as { result: { value: { data: unknown } } };
  t.same(jsonParsedSlice.result.value.data, [Buffer.from('toll').toString('base64'), 'base64'], 'agave slices the base64 fallback of jsonParsed');
});

t.test('commitment levels lag the head, and minContextSlot applies to getSlot too', async (t) => {
  instance.node.advance(40);
  // One batch, so the slot timer cannot tick between the three reads.
  const batch = (await post(instance.url, ['processed', 'confirmed', 'finalized'].map((commitment, i) => rpc('getSlot', [{ commitment }], i)))).json as Array<{ id: number; result: number }>;
  const [processed, confirmed, finalized] = [0, 1, 2].map((id) => batch.find((a) => a.id === id)!.result) as [number, number, number];
  t.ok(processed > confirmed && confirmed > finalized, `${processed} > ${confirmed} > ${finalized}`);
  const refused = (await post(instance.url, rpc('getSlot', [{ minContextSlot: processed + 10_000 }]))).json as { error: { code: number } };
  t.equal(refused.error.code, -32016);
});

t.test('Rust float text', async (t) => {
  t.same([1, 0.42, 1234.56789, 1e-7, 1e16, 1.5e17, 0.0001, 100].map((x) => rustF64(x).text), ['1.0', '0.42', '1234.56789', '1e-7', '1e16', '1.5e17', '0.0001', '100.0']);
});

t.test('stop closes the server and the slot timer', async (t) => {
  const other = await startLiteSvmInstance('litesvm#stop', { slotMs: 10, seed: false });
  t.throws(() => other.getSeed(), /seed: false/);
  await other.stop();
  await other.stop();
  t.equal(other.server.server.listening, false);
  const slot = other.node.slot('processed');
  await new Promise((resolve) => setTimeout(resolve, 60));
  t.equal(other.node.slot('processed'), slot, 'no slot moved after stop');
});
