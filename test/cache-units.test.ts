import t from 'tap';
import { MemoryCacheStore } from '../plugins/cache/index.js';
import { answerMember, envelope } from '../plugins/cache/envelope.js';
import { canonicalParams } from '../plugins/cache/cache-key.js';
import { resolveCacheSettings } from '../plugins/cache/settings.js';
import type { ChainHead } from '../core/family-api.js';
import { EVM_CACHE_POLICIES } from '../plugins/evm/index.js';
import { blockScope } from '../plugins/evm/cache-policies.js';
import { SOLANA_CACHE_POLICIES } from '../plugins/solana/index.js';
import { SOLANA_CACHE_TTL_MS } from '../plugins/solana/cache-policies.js';

const head: ChainHead = { number: 100, hash: '0xaa', parentHash: '0xbb', finalized: 36 };

t.test('evm block identifiers: heights, tags and hashes', async (t) => {
  t.same(blockScope('0x10'), { scope: 'block', block: 16 });
  t.same(blockScope('earliest'), { scope: 'block', block: 0 });
  for (const tag of ['latest', 'safe', 'finalized', undefined]) t.same(blockScope(tag), { scope: 'head' }, `${String(tag)} is head-bound, never immutable`);
  t.equal(blockScope('pending'), undefined, 'pending is never cached');
  t.same(blockScope({ blockNumber: '0x5' }), { scope: 'block', block: 5 });
  t.same(blockScope({ blockHash: `0x${'1'.repeat(64)}` }), { scope: 'unfinalized' });
});

t.test('evm policies: what is kept and what is not', async (t) => {
  const m = EVM_CACHE_POLICIES.methods;
  t.equal(m.eth_sendRawTransaction, undefined, 'writes have no policy');
  t.equal(m.eth_newFilter, undefined, 'filters have no policy');
  t.equal(m.eth_estimateGas!.scope([{ to: '0x00' }], head), undefined, 'estimateGas without a block may mean pending');
  t.same(m.eth_getLogs!.scope([{ fromBlock: '0x1', toBlock: '0x4' }], head), { scope: 'block', block: 4 });
  t.equal(m.eth_getLogs!.scope([{ fromBlock: '0x1', toBlock: 'pending' }], head), undefined);
  t.ok(m.eth_getLogs!.keep!([], [{ fromBlock: '0x1', toBlock: '0x4' }]), 'an empty range answer is a real answer');
  t.notOk(m.eth_getLogs!.keep!([], [{ blockHash: `0x${'1'.repeat(64)}` }]), 'an empty answer by block hash may be a gap');
  t.equal(m.eth_getTransactionReceipt!.blockOf!({ blockNumber: '0x2a' }), 42);
  t.equal(m.eth_getTransactionByHash!.blockOf!({ blockNumber: null }), undefined, 'a pending transaction belongs to no block yet');
});

t.test('solana: commitment decides the TTL; processed is never cached', async (t) => {
  const slot = SOLANA_CACHE_POLICIES.methods.getSlot!;
  t.same(slot.scope([{ commitment: 'confirmed' }], undefined), { scope: 'ttl', ttlMs: SOLANA_CACHE_TTL_MS.confirmed });
  t.same(slot.scope([], undefined), { scope: 'ttl', ttlMs: SOLANA_CACHE_TTL_MS.finalized }, 'the default commitment is finalized');
  t.equal(slot.scope([{ commitment: 'processed' }], undefined), undefined);
  t.equal(SOLANA_CACHE_POLICIES.methods.getHealth, undefined, 'health is always asked');
});

t.test('keys: object members sorted, hex lower-cased, base58 kept', async (t) => {
  t.equal(canonicalParams([{ b: '0xAB', a: 1 }]), canonicalParams([{ a: 1, b: '0xab' }]));
  t.not(canonicalParams(['So11111111111111111111111111111111111111112']), canonicalParams(['so11111111111111111111111111111111111111112']));
});

t.test('envelopes: the node\'s bytes are kept, the id is the client\'s', async (t) => {
  const body = Buffer.from('{"jsonrpc":"2.0","id":7,"result":{"lamports":18446744073709551615,"s":"a\\"}b"}}');
  const member = answerMember(body)!;
  t.equal(member.kind, 'result');
  t.equal(member.bytes.toString(), '{"lamports":18446744073709551615,"s":"a\\"}b"}', 'numbers beyond 2^53 stay exact');
  t.equal(envelope('x', 'result', member.bytes).toString(), '{"jsonrpc":"2.0","id":"x","result":{"lamports":18446744073709551615,"s":"a\\"}b"}}');
  t.equal(answerMember(Buffer.from('{"id":1,"jsonrpc":"2.0","error":{"code":3}}'))!.kind, 'error');
  // Every kind of id, a string of several UTF-8 bytes per character and one that needs escapes included,
  // each in an envelope of the exact length that JSON.parse reads back.
  const bytes = Buffer.from('{"s":"é€"}');
  for (const id of [0, -1, 1e21, 2 ** 53 + 2, 1.5, '', 'ünï€😀', 'a"b\\c\n', null, undefined]) {
    for (const kind of ['result', 'error'] as const) {
      const out = envelope(id, kind, bytes);
      t.same(JSON.parse(out.toString('utf8')), { jsonrpc: '2.0', id: id ?? null, [kind]: { s: 'é€' } }, `id ${JSON.stringify(id)}, ${kind}`);
      t.equal(out.length, Buffer.byteLength(`{"jsonrpc":"2.0","id":${JSON.stringify(id ?? null)},"${kind}":{"s":"é€"}}`), 'no byte left unwritten');
    }
  }
});

t.test('memory store: bounded in bytes, least recently used first; tags drop together', async (t) => {
  const store = new MemoryCacheStore(4096);
  const value = Buffer.alloc(1000);
  for (const key of ['a', 'b', 'c']) store.set(key, value, 60_000, key === 'c' ? undefined : 'unfinalized');
  store.get('a');
  store.set('d', value, 60_000);
  t.ok(store.bytes <= 4096);
  t.equal(store.get('b'), undefined, 'the least recently used entry went first');
  t.ok(store.get('a'));
  store.dropTag('unfinalized');
  t.equal(store.get('a'), undefined, 'tagged entries dropped');
  t.ok(store.get('c') && store.get('d'), 'others stay');
});

t.test('settings: defaults, and a bad field is named', async (t) => {
  t.equal(resolveCacheSettings([]).maxBytes, 64 * 1024 * 1024);
  t.throws(() => resolveCacheSettings([{ maxBytes: 'big' }]), /plugins\.cache\.maxBytes: must be integer/);
  t.throws(() => resolveCacheSettings([{ colour: 1 }]), /plugins\.cache\.colour/);
});
