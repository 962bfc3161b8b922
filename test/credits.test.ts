import t from 'tap';
import { Tokens } from '../core/plugin-api.js';
import { type CreditLedger } from '../core/store-api.js';
import { httpTransport } from '../plugins/http/index.js';
import { evmFamily } from '../plugins/evm/index.js';
import { polygonFamily } from '../plugins/polygon/index.js';
import { devnet } from '@tollgate/devnet';
import { ManualClock, startTestGateway } from './helpers/gateway.js';
import { post, rpc } from './helpers/json-rpc.js';
import { closedPort } from './helpers/closed-port.js';


const BIG = 'credits-big-key-0001';
const TINY = 'credits-tiny-key-001';
const SLOW = 'credits-slow-key-001';
const DAY = 24 * 3600 * 1000;
const clock = new ManualClock(Date.UTC(2026, 10, 22, 23, 59, 59, 0));
const deadPort = await closedPort();

const gw = await startTestGateway(
  {
    plans: {
      big: { dailyCredits: 1_000_000, creditsPerSecond: 1_000_000, failover: false },
      tiny: { dailyCredits: 3 * 80 + 79, creditsPerSecond: 1_000_000, failover: false },
      slow: { dailyCredits: 1_000_000, creditsPerSecond: 100, failover: false },
    },
    keys: [
      { key: BIG, id: 'big', plan: 'big' },
      { key: TINY, id: 'tiny', plan: 'tiny' },
      { key: SLOW, id: 'slow', plan: 'slow' },
    ],
    networks: [
      { name: 'eth', families: ['evm'], upstreams: [{ embedded: 'anvil' }] },
      { name: 'polygon', families: ['evm', 'polygon'], upstreams: [{ embedded: 'bor' }] },
      { name: 'dead', families: ['evm'], upstreams: [{ url: `http://127.0.0.1:${deadPort}` }] },
    ],
  },
  [httpTransport(), evmFamily(), polygonFamily(), devnet()],
  { clock },
);
t.teardown(() => gw.close());

const ledger = gw.gateway.container.resolve<CreditLedger>(Tokens.CreditLedger);
const used = async (keyId: string): Promise<number> => (await ledger.balance(keyId, 1_000_000, new Date(clock.now()))).used;
const credits = (network: string, method: string): number => gw.gateway.networks.get(network)!.methods.get(method)!.definition.credits;

const ZERO_HASH = `0x${'00'.repeat(32)}`;
const ADDRESS = `0x${'11'.repeat(20)}`;
/** One valid call of every spec method (and the polygon one), with the cost the spec's table gives. */
const specCalls: Array<{ network: string; method: string; params: unknown[]; cost: number }> = [
  { network: 'eth', method: 'eth_getLogs', params: [{ fromBlock: '0x0', toBlock: 'latest' }], cost: 255 },
  { network: 'eth', method: 'eth_getUncleByBlockNumberAndIndex', params: ['latest', '0x0'], cost: 150 },
  { network: 'eth', method: 'eth_getUncleByBlockHashAndIndex', params: [ZERO_HASH, '0x0'], cost: 150 },
  { network: 'eth', method: 'eth_getTransactionByBlockNumberAndIndex', params: ['latest', '0x0'], cost: 150 },
  { network: 'eth', method: 'eth_getTransactionByHash', params: [ZERO_HASH], cost: 80 },
  { network: 'eth', method: 'eth_call', params: [{ to: ADDRESS, data: '0x' }, 'latest'], cost: 80 },
  { network: 'eth', method: 'eth_getBlockByNumber', params: ['latest', false], cost: 80 },
  { network: 'eth', method: 'eth_getTransactionReceipt', params: [ZERO_HASH], cost: 80 },
  { network: 'eth', method: 'eth_createAccessList', params: [{ to: ADDRESS, data: '0x' }, 'latest'], cost: 80 },
  { network: 'polygon', method: 'bor_getCurrentValidators', params: [], cost: credits('polygon', 'bor_getCurrentValidators') },
];

t.test('each method charges exactly its table cost', async (t) => {
  const latest = (await post(gw.url('eth', BIG), rpc('eth_getBlockByNumber', ['latest', false]))).json as { result: { hash: string } };
  specCalls[2]!.params[0] = latest.result.hash;
  for (const call of specCalls) {
    t.equal(credits(call.network, call.method), call.cost, `${call.method} costs ${call.cost} in the method table`);
    const before = await used('big');
    const res = await post(gw.url(call.network, BIG), rpc(call.method, call.params));
    t.equal(res.status, 200, call.method);
    t.notOk((res.json as { error?: unknown }).error, `${call.method} is served`);
    t.equal((await used('big')) - before, call.cost, `${call.method} charged ${call.cost}`);
  }
});

t.test('a batch charges per call', async (t) => {
  const before = await used('big');
  const res = await post(gw.url('eth', BIG), [rpc('eth_getBlockByNumber', ['latest', false], 1), rpc('eth_getLogs', [{}], 2), rpc('eth_nope', [], 3)]);
  t.equal((res.json as unknown[]).length, 3);
  t.equal((await used('big')) - before, 80 + 255, 'the unknown method costs nothing');
});

t.test('calls refused before dispatch cost nothing', async (t) => {
  const before = await used('big');
  const badParams = await post(gw.url('eth', BIG), rpc('eth_getBlockByNumber', ['latest']));
  t.equal((badParams.json as { error: { code: number } }).error.code, -32602);
  const tooMany = await post(gw.url('eth', BIG), rpc('eth_getLogs', [{ address: Array.from({ length: 5001 }, (_, i) => `0x${i.toString(16).padStart(40, '0')}`) }]));
  t.equal((tooMany.json as { error: { code: number } }).error.code, -32005, 'the limit refuses the call after metering');
  t.equal(await used('big'), before, 'both refunded or never charged');
});

t.test('a call no upstream could serve is refunded', async (t) => {
  const before = await used('big');
  const res = await post(gw.url('dead', BIG), rpc('eth_getBlockByNumber', ['latest', false]));
  t.equal(res.status, 503);
  t.equal((res.json as { error: { code: number } }).error.code, -33503);
  t.equal(res.headers['retry-after'], '1');
  t.equal(await used('big'), before);
});

t.test('the daily balance runs out exactly, answers 402, and resets at 00:00 UTC', async (t) => {
  for (let i = 0; i < 3; i++) {
    const res = await post(gw.url('eth', TINY), rpc('eth_getBlockByNumber', ['latest', false], i));
    t.equal(res.status, 200, `call ${i + 1} fits`);
  }
  const refused = await post(gw.url('eth', TINY), rpc('eth_getBlockByNumber', ['latest', false], 4));
  t.equal(refused.status, 402, 'the first call that does not fit gets 402');
  const error = (refused.json as { error: { code: number; message: string; data: { resetsAt: string; remaining: number } } }).error;
  t.equal(error.code, -33000);
  t.match(error.message, /daily credit limit of 319/);
  t.equal(error.data.resetsAt, '2026-11-23T00:00:00.000Z');
  t.equal(error.data.remaining, 79);
  const balance = await ledger.balance('tiny', 319, new Date(clock.now()));
  t.equal(balance.used, 240, 'the refused call took nothing');

  const cheap = credits('eth', 'eth_chainId');
  t.ok(cheap <= 79, 'eth_chainId is cheaper than what is left');
  t.equal((await post(gw.url('eth', TINY), rpc('eth_chainId', []))).status, 200, 'a cheaper call still fits');

  clock.advance(1000);
  const nextDay = await post(gw.url('eth', TINY), rpc('eth_getBlockByNumber', ['latest', false], 5));
  t.equal(nextDay.status, 200, 'the balance is back after 00:00 UTC');
  t.equal((await ledger.balance('tiny', 319, new Date(clock.now()))).used, 80);
  clock.advance(-1000);
  t.equal((await ledger.balance('tiny', 319, new Date(clock.now()))).used, 240 + cheap, 'the previous day keeps its own total');
  clock.advance(1000 + DAY);
});

t.test('the throughput limit answers 429 with Retry-After and lets calls through again later', async (t) => {
  t.equal((await post(gw.url('eth', SLOW), rpc('eth_getBlockByNumber', ['latest', false]))).status, 200);
  const limited = await post(gw.url('eth', SLOW), rpc('eth_getBlockByNumber', ['latest', false]));
  t.equal(limited.status, 429);
  t.equal((limited.json as { error: { code: number } }).error.code, -33200);
  t.equal(limited.headers['retry-after'], '1');
  const before = await used('slow');
  t.equal(before, 80, 'the limited call took no credits');
  clock.advance(1000);
  t.equal((await post(gw.url('eth', SLOW), rpc('eth_getBlockByNumber', ['latest', false]))).status, 200);
});
