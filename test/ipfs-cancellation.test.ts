/**
 * The file-storage transport cancels as every transport does, by unsubscribing: a client that leaves
 * before its answer stops the call, the request to the node (a real server holding its answer until
 * told) is aborted, the ledger ends where it started, and the call is recorded once, as a failure. The
 * same request answered once the node is told is served and recorded once, with its bytes.
 */
import t from 'tap';
import { request } from 'node:http';
import type { ServerResponse } from 'node:http';
import { Tokens } from '../core/plugin-api.js';
import type { CreditLedger } from '../core/store-api.js';
import { basic, IPFS_KEY, IPFS_SECRET, startIpfsGateway } from './helpers/ipfs-gateway.js';
import { CAT_HEADERS, startKuboStub } from './helpers/kubo-stub.js';
import { until } from './helpers/until.js';

const HELLO = 'QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o';

let received = 0;
let aborted = 0;
// Answers held until the test tells the node to answer.
const held = new Set<ServerResponse>();
const stub = await startKuboStub((req, res) => {
  received++;
  req.resume();
  held.add(res);
  res.on('close', () => {
    held.delete(res);
    if (!res.writableFinished) aborted++;
  });
});
const release = (): void => {
  for (const res of held) {
    res.writeHead(200, CAT_HEADERS);
    res.end('hello world\n');
  }
};
const gw = await startIpfsGateway({ upstreams: [{ url: stub.url }] });
t.teardown(async () => {
  await gw.close();
  await stub.close();
});
const usage = gw.gateway.container.resolve(Tokens.UsageRecorder);
const ledger = gw.gateway.container.resolve<CreditLedger>(Tokens.CreditLedger);
let debits = 0;
let refunds = 0;
const debit = ledger.debit.bind(ledger);
const refund = ledger.refund.bind(ledger);
ledger.debit = (...args) => { debits++; return debit(...args); };
ledger.refund = (...args) => { refunds++; return refund(...args); };
const used = async (): Promise<number> => (await ledger.balance('ipfs-test', 1e12, new Date())).used;
const day = new Date().toISOString().slice(0, 10);
const totals = async (): Promise<Record<string, unknown>> => (await usage.usage!('ipfs-test', day)) as Record<string, unknown>;

function cat(): ReturnType<typeof request> {
  const req = request(`${gw.api}/cat?arg=${HELLO}`, { method: 'POST', headers: { authorization: basic(IPFS_KEY, IPFS_SECRET) } });
  req.on('error', () => {});
  req.end();
  return req;
}

t.test('a client that leaves before the answer: the node\'s request is aborted, the ledger untouched, the call recorded once as failed', async (t) => {
  const before = await used();
  const req = cat();
  await until('the node holds the request', () => received === 1 && held.size === 1);
  req.destroy();
  await until('the node saw its request aborted', () => aborted === 1);
  await until('the call was recorded', async () => Object.keys(await totals()).length > 0);
  t.same(await totals(), { cat: { calls: 1, credits: 0, bytes: 0, failed: 1 } }, 'one call, failed, charged nothing');
  t.equal(await used(), before, 'the ledger ends where it started');
  t.equal(refunds, debits, 'nothing debited is left unrefunded');
  t.equal(held.size, 0, 'nothing is left waiting on the node');
});

t.test('the same request answered once the node is told: served and recorded once, with its bytes', async (t) => {
  const req = cat();
  await until('the node holds the request', () => received === 2 && held.size === 1);
  const body = new Promise<string>((resolve) => {
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    });
  });
  release();
  t.equal(await body, 'hello world\n');
  await until('the call was recorded', async () => ((await totals()).cat as { calls: number }).calls === 2);
  t.same(await totals(), { cat: { calls: 2, credits: 0, bytes: 12, failed: 1 } });
  t.equal(aborted, 1, 'no request aborted this time');
});
