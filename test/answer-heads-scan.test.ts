// The evm and Solana hooks on answers large enough to be scanned (a block of 120 hashes, a list of
// accounts): the head and the counts are read from the bytes, as JSON.parse would read them.
import t from 'tap';
import { answerView, type AnswerView } from '../core/family-api.js';
import { GatewayError } from '../core/index.js';
import { EVM_ANSWER_HEADS } from '../plugins/evm/answer-heads.js';
import { getLogsLimits } from '../plugins/evm/get-logs-limits.js';
import { SOLANA_ANSWER_HEADS } from '../plugins/solana/answer-heads.js';
import { programAccountsCap } from '../plugins/solana/limits.js';

const HASH = `0x${'ab'.repeat(32)}`;

/** The view a hook gets of `text`, on the scanning path whatever its length. */
const scanned = (text: string): AnswerView => answerView(Buffer.from(text), { scan: true });

const block = (number: string, extra = ''): string =>
  `{"jsonrpc":"2.0","id":7,"result":{"hash":"${HASH}","logsBloom":"0x${'0'.repeat(512)}",${extra}"number":${number},"transactions":[${Array.from({ length: 120 }, () => `"${HASH}"`).join(',')}],"uncles":[]}}`;

t.test('eth_getBlockByNumber for a head tag: the block number is read from the scanned bytes', async (t) => {
  const read = EVM_ANSWER_HEADS.eth_getBlockByNumber!.answerHead!;
  t.ok(Buffer.byteLength(block('"0x1b4"')) > 1024, 'the answer is long enough to be scanned by default');
  t.same(read(answerView(Buffer.from(block('"0x1b4"'))), ['latest', false]), { head: 436, scope: '' });
  t.same(read(scanned(block('"0x1b4"')), ['finalized', false]), { head: 436, scope: 'finalized' });
  t.equal(read(scanned(block('"0x1b4"')), ['0x1b4', false]), undefined, 'a block asked for by number shows no head');
  t.same(read(scanned(block('"0x1b5"', '"number":"0x1",')), ['latest', false]), { head: 437, scope: '' }, 'the last of duplicate numbers, as JSON.parse keeps');
  t.same(read(scanned(block('"0x1"', '"n\\u0075mber":"0x2",').replace('"number":"0x1"', '"num":"0x1"')), ['latest', false]), { head: 2, scope: '' }, 'an escaped name is read as its name');
  t.equal(read(scanned(block('null')), ['latest', false]), undefined, 'no number, no head');
  t.same(EVM_ANSWER_HEADS.eth_blockNumber!.answerHead!(scanned('{"jsonrpc":"2.0","id":1,"result":"0x10"}'), []), { head: 16 });
});

t.test('Solana context.slot is read from the scanned bytes, the accounts skipped', async (t) => {
  const accounts = Array.from({ length: 50 }, (_, i) => `{"pubkey":"${'1'.repeat(44)}","account":{"data":["${'A'.repeat(200)}","base64"],"lamports":${i},"owner":"${'1'.repeat(32)}","space":0}}`).join(',');
  const answer = `{"jsonrpc":"2.0","id":1,"result":{"value":[${accounts}],"context":{"apiVersion":"2.0.15","slot":341197053}}}`;
  t.same(SOLANA_ANSWER_HEADS.getProgramAccounts!.answerHead!(answerView(Buffer.from(answer)), ['prog', { commitment: 'confirmed', withContext: true }]), { head: 341197053, scope: 'slot:confirmed' });
  t.same(SOLANA_ANSWER_HEADS.getSignatureStatuses!.answerHead!(scanned('{"jsonrpc":"2.0","id":1,"result":{"context":{"slot":9},"value":[null]}}'), [['sig']]), { head: 9, scope: '' });
  t.same(SOLANA_ANSWER_HEADS.getSlot!.answerHead!(scanned('{"jsonrpc":"2.0","id":1,"result":12}'), []), { head: 12, scope: 'slot:finalized' });

  const cap = programAccountsCap(49);
  t.throws(() => cap(answerView(Buffer.from(answer))), GatewayError, 'fifty accounts under context are counted, over the cap of 49');
  t.throws(() => cap(answerView(Buffer.from(`{"jsonrpc":"2.0","id":1,"result":[${accounts}]}`))), GatewayError, 'a bare list is counted');
  t.doesNotThrow(() => programAccountsCap(50)(answerView(Buffer.from(answer))), 'fifty accounts pass a cap of 50');
});

t.test('eth_getLogs counts its logs by scanning', async (t) => {
  const { checkResult } = getLogsLimits({ maxParams: 10, maxResults: 100, timeoutMs: 1000 });
  const log = `{"address":"0x${'11'.repeat(20)}","topics":["${HASH}"],"data":"0x","blockNumber":"0x1"}`;
  const logs = (count: number): AnswerView => answerView(Buffer.from(`{"jsonrpc":"2.0","id":1,"result":[${Array.from({ length: count }, () => log).join(',')}]}`));
  t.doesNotThrow(() => checkResult(logs(100), {} as never), '100 logs pass');
  t.throws(() => checkResult(logs(101), {} as never), GatewayError, '101 logs are over the cap');
  t.doesNotThrow(() => checkResult(answerView(Buffer.from('{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"x"}}')), {} as never), 'a node error passes');
});
