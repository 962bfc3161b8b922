import t from 'tap';
import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { delayWhen, NEVER, of, timeout, firstValueFrom, type Subscription } from 'rxjs';
import { createGateway, type JsonRpcOutput, type TollgatePlugin } from 'tollgate';
import { step, Tokens } from 'tollgate/plugin';
import type { MethodDefinition, NetworkFamily } from 'tollgate/family';
import { httpTransport } from 'tollgate/plugins/http';
import { wsTransport } from 'tollgate/plugins/ws';
import { startHoldingUpstream } from '../helpers/holding-upstream.js';
import { until } from '../helpers/failover-upstreams.js';
import { openWs } from '../helpers/ws-client.js';

// One cancellation, on every entry point: a caller that unsubscribes from handle() or aborts the signal
// it gave, an HTTP client that disconnects before its answer and a WebSocket that closes with calls in
// flight all stop the run at the next stage boundary, abort the upstream request, run the compensations
// once and leave the call uncharged.
const upstream = await startHoldingUpstream();
t.teardown(() => upstream.close());

const method = (name: string): MethodDefinition => ({ name, credits: 7, params: { type: 'array' } });
const family: NetworkFamily = { name: 'held', methods: [method('held_ping'), method('held_hold'), method('held_parked'), method('held_gated')] };

// A step before meter that holds one method's calls until the test opens it.
let gated = 0;
let openGate: () => void = () => {};
const gate = (): Promise<void> => new Promise((resolve) => { gated++; openGate = resolve; });
const plugin: TollgatePlugin = {
  name: 'held',
  register(container) {
    container.register(Tokens.Family, { useValue: family });
    // An operator stage that parks one method's calls forever: cancelling must leave it too.
    container.register(Tokens.Stage, {
      useValue: {
        name: 'park',
        after: 'meter',
        create: () => (source) => source.pipe(delayWhen((ctx) => (ctx.call.method === 'held_parked' ? NEVER : of(0)))),
      },
    });
    container.register(Tokens.Stage, { useValue: { name: 'gate', after: 'validate', create: () => step((ctx) => (ctx.call.method === 'held_gated' ? gate() : undefined)) } });
  },
};

const KEY = 'cancellation-key-0001';
const gateway = await createGateway({
  config: {
    log: { level: 'silent' },
    server: { host: '127.0.0.1', port: 0 },
    keys: [{ key: KEY, id: 'c', plan: 'growth' }],
    networks: [{ name: 'n', families: ['held'], upstreams: [{ url: upstream.url }] }],
    upstreamDefaults: { timeoutMs: 60_000 },
  },
  plugins: [httpTransport(), wsTransport(), plugin],
});
t.teardown(() => gateway.close());
const server = await gateway.listen();
const port = (server.address() as AddressInfo).port;
const ledger = gateway.container.resolve(Tokens.CreditLedger);
const used = async (): Promise<number> => (await ledger.balance('c', 1e12, new Date())).used;
// Count the ledger's debits and refunds (meter and the compensation call them on this same object), so a
// call never debited is told apart from one debited and refunded, and a refund made twice shows.
let debits = 0;
let refunds = 0;
const debit = ledger.debit.bind(ledger);
const refund = ledger.refund.bind(ledger);
ledger.debit = (...args) => { debits++; return debit(...args); };
ledger.refund = (...args) => { refunds++; return refund(...args); };
const wentAway = { jsonrpc: '2.0', id: 1, error: { code: -33503, message: 'the client went away' } };
const body = (m: string, id = 1): string => JSON.stringify({ jsonrpc: '2.0', id, method: m, params: [] });

t.test('an answered call is charged (the baseline the refunds are measured against)', async (t) => {
  const before = await used();
  const output = await firstValueFrom(gateway.handle({ network: 'n', apiKey: KEY, body: JSON.parse(body('held_ping')) }));
  t.same(JSON.parse(String(output.body)), { jsonrpc: '2.0', id: 1, result: '0x1' });
  t.equal(await used(), before + 7);
});

t.test('handle(): unsubscribing aborts the upstream request and refunds the call', async (t) => {
  const before = await used();
  const received = upstream.received();
  const aborted = upstream.aborted();
  const outputs: JsonRpcOutput[] = [];
  const subscription: Subscription = gateway.handle({ network: 'n', apiKey: KEY, body: JSON.parse(body('held_hold')) }).subscribe((o) => outputs.push(o));
  await until('the node received the call', () => upstream.received() === received + 1);
  t.equal(await used(), before + 7, 'debited before dispatch');
  subscription.unsubscribe();
  await until('the node saw the request aborted', () => upstream.aborted() === aborted + 1);
  await until('the call was refunded', async () => (await used()) === before);
  t.same(outputs, [], 'nothing was emitted after unsubscribing');
});

t.test('handle(): an operator stage the call waits in is left when the caller unsubscribes; refunded', async (t) => {
  const before = await used();
  const received = upstream.received();
  const fallback: JsonRpcOutput = { status: 504, headers: {}, body: undefined, contexts: [] };
  const answer = await firstValueFrom(gateway.handle({ network: 'n', apiKey: KEY, body: JSON.parse(body('held_parked')) }).pipe(timeout({ first: 100, with: () => of(fallback) })));
  t.equal(answer, fallback, 'the caller timed out on its own');
  await until('the parked call was refunded', async () => (await used()) === before);
  t.equal(upstream.received(), received, 'the parked call never reached the node');
});

t.test('HTTP: a client that disconnects before its answer cancels the call; refunded', async (t) => {
  const before = await used();
  const [debited, refunded] = [debits, refunds];
  const received = upstream.received();
  const aborted = upstream.aborted();
  const payload = body('held_hold');
  const req = request({ host: '127.0.0.1', port, path: `/n/v3/${KEY}`, method: 'POST', headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } });
  req.on('error', () => {});
  req.end(payload);
  await until('the node received the call', () => upstream.received() === received + 1);
  t.equal(await used(), before + 7, 'debited before dispatch');
  req.destroy();
  await until('the node saw the request aborted', () => upstream.aborted() === aborted + 1);
  await until('the call was refunded', async () => (await used()) === before);
  t.equal(await used(), before, 'the ledger ends where it started');
  t.equal(debits, debited + 1, 'debited once');
  t.equal(refunds, refunded + 1, 'refunded exactly once');
  t.equal(upstream.held(), 0, 'nothing is left waiting on the node');
});

t.test('HTTP: a batch whose client disconnects cancels every call in it; refunded', async (t) => {
  const before = await used();
  const received = upstream.received();
  const calls = upstream.calls();
  const aborted = upstream.aborted();
  const payload = `[${body('held_hold', 1)},${body('held_hold', 2)}]`;
  const req = request({ host: '127.0.0.1', port, path: `/n/v3/${KEY}`, method: 'POST', headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } });
  req.on('error', () => {});
  req.end(payload);
  await until('the node received both calls', () => upstream.calls() === calls + 2);
  t.equal(upstream.received(), received + 1, 'both calls went in one upstream batch request');
  req.destroy();
  await until('the node saw the batch request aborted', () => upstream.aborted() === aborted + 1);
  await until('both calls were refunded', async () => (await used()) === before);
  t.equal(await used(), before);
});

t.test('WebSocket: a socket that closes with calls in flight cancels them; refunded', async (t) => {
  const before = await used();
  const [debited, refunded] = [debits, refunds];
  const received = upstream.received();
  const aborted = upstream.aborted();
  const ws = await openWs(`ws://127.0.0.1:${port}/n/ws/v3/${KEY}`);
  ws.send(body('held_ping', 1));
  await ws.waitFor(1);
  t.equal(await used(), before + 7, 'the answered call is charged');
  ws.send(body('held_hold', 2));
  ws.send(body('held_hold', 3));
  await until('the node received both held calls', () => upstream.received() === received + 3);
  ws.socket.terminate();
  await until('the node saw both requests aborted', () => upstream.aborted() === aborted + 2);
  await until('the held calls were refunded', async () => (await used()) === before + 7);
  t.equal(await used(), before + 7, 'only the answered call is charged');
  t.equal(debits, debited + 3, 'each call debited once');
  t.equal(refunds, refunded + 2, 'each held call refunded exactly once');
  t.equal(upstream.held(), 0, 'nothing is left waiting on the node');
});

t.test('HTTP: a held call the node answers once told is charged once, never refunded', async (t) => {
  const before = await used();
  const [debited, refunded, received] = [debits, refunds, upstream.received()];
  const outputs: JsonRpcOutput[] = [];
  gateway.handle({ network: 'n', apiKey: KEY, body: JSON.parse(body('held_hold')) }).subscribe((o) => outputs.push(o));
  await until('the node holds the call', () => upstream.held() === 1 && upstream.received() === received + 1);
  upstream.release();
  await until('the call was answered', () => outputs.length === 1);
  t.same(JSON.parse(String(outputs[0]!.body)), { jsonrpc: '2.0', id: 1, result: '0x1' });
  t.equal(await used(), before + 7);
  t.equal(debits, debited + 1);
  t.equal(refunds, refunded, 'nothing refunded');
});

t.test('handle(): a signal aborted while a stage before meter is pending stops the run there: never debited, never sent', async (t) => {
  const [debited, received] = [debits, upstream.received()];
  const outputs: JsonRpcOutput[] = [];
  const signal = new AbortController();
  gateway.handle({ network: 'n', apiKey: KEY, body: JSON.parse(body('held_gated')), signal: signal.signal }).subscribe((o) => outputs.push(o));
  await until('the call waits at the gate', () => gated === 1);
  signal.abort();
  openGate();
  await until('the call was answered', () => outputs.length === 1);
  t.equal(outputs[0]!.status, 503);
  t.same(JSON.parse(String(outputs[0]!.body)), wentAway, 'it fails as a client that went away');
  t.equal(debits, debited, 'meter never ran: nothing debited, so nothing to refund');
  t.equal(upstream.received(), received, 'nothing reached the node');
});

t.test('handle(): a signal aborted while the upstream call is pending aborts it; refunded exactly once', async (t) => {
  const before = await used();
  const [debited, refunded, received, aborted] = [debits, refunds, upstream.received(), upstream.aborted()];
  const outputs: JsonRpcOutput[] = [];
  const signal = new AbortController();
  gateway.handle({ network: 'n', apiKey: KEY, body: JSON.parse(body('held_hold')), signal: signal.signal }).subscribe((o) => outputs.push(o));
  await until('the node received the call', () => upstream.received() === received + 1);
  signal.abort();
  await until('the node saw the request aborted', () => upstream.aborted() === aborted + 1);
  await until('the call was answered', () => outputs.length === 1);
  t.same(JSON.parse(String(outputs[0]!.body)), wentAway);
  t.equal(debits, debited + 1, 'debited once');
  t.equal(refunds, refunded + 1, 'refunded once');
  t.equal(await used(), before);
});

t.test('handle(): a signal aborted while an operator stage holds the call leaves the stage at once; refunded once', async (t) => {
  const before = await used();
  const [debited, refunded] = [debits, refunds];
  const outputs: JsonRpcOutput[] = [];
  const signal = new AbortController();
  gateway.handle({ network: 'n', apiKey: KEY, body: JSON.parse(body('held_parked')), signal: signal.signal }).subscribe((o) => outputs.push(o));
  await until('the call was debited and waits in the stage', () => debits === debited + 1);
  signal.abort();
  await until('the parked call was answered', () => outputs.length === 1);
  t.same(JSON.parse(String(outputs[0]!.body)), wentAway);
  t.equal(refunds, refunded + 1, 'refunded once');
  t.equal(await used(), before);
});

t.test('handle(): unsubscribing and aborting the signal of one call refund it once, not twice', async (t) => {
  const before = await used();
  const [refunded, aborted, received] = [refunds, upstream.aborted(), upstream.received()];
  const signal = new AbortController();
  const subscription = gateway.handle({ network: 'n', apiKey: KEY, body: JSON.parse(body('held_hold')), signal: signal.signal }).subscribe();
  await until('the node received the call', () => upstream.received() === received + 1);
  signal.abort();
  subscription.unsubscribe();
  await until('the node saw the request aborted', () => upstream.aborted() === aborted + 1);
  await until('the call was refunded', async () => (await used()) === before);
  t.equal(refunds, refunded + 1, 'one refund');
});
