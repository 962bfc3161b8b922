import 'reflect-metadata';
import t from 'tap';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { firstValueFrom, of, timeout } from 'rxjs';
import { createGateway, type JsonRpcOutput } from '../core/index.js';
import { Tokens } from '../core/plugin-api.js';
import { evmFamily } from '../plugins/evm/index.js';
import { until } from './helpers/until.js';

// gateway.handle() without a transport: cancelling (unsubscribing, or an AbortSignal) aborts the
// upstream request and refunds the call; an answered call is charged.
const KEY = 'handle-test-key-0001';
const requests: IncomingMessage[] = [];
let aborted = 0;
// A node that answers eth_chainId at once and leaves eth_blockNumber hanging.
const node = createServer((req, res) => {
  requests.push(req);
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const call = JSON.parse(Buffer.concat(chunks).toString()) as { id: number; method: string };
    if (call.method === 'eth_chainId') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id: call.id, result: '0x1' }));
    }
  });
  res.on('close', () => { if (!res.writableFinished) aborted++; });
});
await new Promise<void>((resolve) => node.listen(0, '127.0.0.1', resolve));
const gateway = await createGateway({
  config: {
    log: { level: 'silent' },
    keys: [{ key: KEY, id: 'h', plan: 'growth' }],
    networks: [{ name: 'eth', families: ['evm'], upstreams: [{ url: `http://127.0.0.1:${(node.address() as AddressInfo).port}` }] }],
    upstreamDefaults: { timeoutMs: 60_000 },
  },
  plugins: [evmFamily()],
});
t.teardown(async () => {
  await gateway.close();
  node.closeAllConnections();
  await new Promise<void>((resolve) => node.close(() => resolve()));
});
const ledger = gateway.container.resolve(Tokens.CreditLedger);
const used = async (): Promise<number> => (await ledger.balance('h', 1e12, new Date())).used;
const call = (method: string, signal?: AbortSignal) =>
  gateway.handle({ network: 'eth', apiKey: KEY, body: { jsonrpc: '2.0', id: 1, method, params: [] }, ...(signal === undefined ? {} : { signal }) });

t.test('an answered call is charged; each subscription runs it again', async (t) => {
  const observable = call('eth_chainId');
  const first = await firstValueFrom(observable);
  t.equal(first.status, 200);
  t.same(JSON.parse(String(first.body)), { jsonrpc: '2.0', id: 1, result: '0x1' });
  const charged = await used();
  t.ok(charged > 0, 'charged');
  await firstValueFrom(observable);
  t.equal(await used(), charged * 2, 'a second subscription is a second call');
});

t.test('unsubscribing (a timeout) cancels the call: the upstream request is aborted, nothing charged', async (t) => {
  const before = await used();
  const seen = requests.length;
  const fallback: JsonRpcOutput = { status: 504, headers: {}, body: Buffer.from('{}'), contexts: [] };
  const answer = await firstValueFrom(call('eth_blockNumber').pipe(timeout({ first: 300, with: () => of(fallback) })));
  t.equal(answer, fallback, 'the caller got its own timeout answer');
  t.equal(requests.length, seen + 1, 'the call reached the node');
  await until('the upstream request is aborted (1)', () => aborted === 1);
  t.equal(aborted, 1, 'the upstream request was aborted');
  await until('the call is refunded', async () => (await used()) === before);
  t.equal(await used(), before, 'the call was refunded');
});

t.test('an AbortSignal cancels the call the same way', async (t) => {
  const before = await used();
  const seen = requests.length;
  const controller = new AbortController();
  const answer = firstValueFrom(call('eth_blockNumber', controller.signal));
  await until('the call reaches the upstream', () => requests.length === seen + 1);
  controller.abort();
  const output = await answer;
  t.equal(output.status, 503);
  t.match(JSON.parse(String(output.body)), { error: { code: -33503, message: /went away/ } });
  await until('the upstream request is aborted (2)', () => aborted === 2);
  t.equal(await used(), before, 'not charged');
  const already = new AbortController();
  already.abort();
  const refused = await firstValueFrom(call('eth_chainId', already.signal));
  t.equal(refused.status, 503);
  t.equal(requests.length, seen + 1, 'an already aborted signal never reaches the node');
});
