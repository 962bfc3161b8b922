import t from 'tap';
import { concat, defer, delayWhen, filter, map, mergeMap, NEVER, of, retry, timeout, timer, catchError, throwError, pipe } from 'rxjs';
import { createGateway, Errors, GatewayError, type TollgatePlugin } from 'tollgate';
import { Tokens, type Stage, type StageDefinition } from 'tollgate/plugin';
import type { MethodDefinition, NetworkFamily } from 'tollgate/family';
import { httpTransport } from 'tollgate/plugins/http';
import type { AddressInfo } from 'node:net';
import { startHoldingUpstream } from '../helpers/holding-upstream.js';

// Operator stages written with plain RxJS, through the public API only: they work anywhere in the
// order, a stage declaring families runs only on those networks, and a stage that breaks the
// one-context-in, one-context-out contract fails the call with a coded error instead of hanging it or
// answering twice.
const upstream = await startHoldingUpstream();
t.teardown(() => upstream.close());

const method = (name: string): MethodDefinition => ({ name, credits: 5, params: { type: 'array' } });
const alpha: NetworkFamily = { name: 'alpha', methods: [method('alpha_ping'), method('alpha_slow'), method('alpha_none'), method('alpha_twice'), method('alpha_open')] };
const beta: NetworkFamily = { name: 'beta', methods: [method('beta_ping')] };

let lookups = 0;
let betaSeen = 0;
const seenAt: string[] = [];
// A lookup that hangs the first time it is asked and answers the second: timeout + retry get past it.
const flakyLookup = (): Promise<string> => (++lookups === 1 ? new Promise<string>(() => {}) : Promise.resolve('ok'));
const only = (prefix: string, stage: Stage): Stage => (source) =>
  source.pipe(mergeMap((ctx) => (ctx.call.method.startsWith(prefix) ? of(ctx).pipe(stage) : of(ctx))));

const stages: StageDefinition[] = [
  // First in the order, before authenticate.
  { name: 'first', before: 'authenticate', create: () => pipe(delayWhen(() => timer(1)), map((ctx) => { seenAt.push('first'); return ctx; })) },
  {
    name: 'lookup',
    after: 'validate',
    create: () => only('alpha_ping', mergeMap((ctx) => defer(flakyLookup).pipe(timeout({ first: 50 }), retry(2), map(() => ctx)))),
  },
  {
    name: 'slow',
    before: 'dispatch',
    create: () => only('alpha_slow', pipe(
      delayWhen(() => NEVER),
      timeout({ first: 30 }),
      catchError(() => throwError(() => new GatewayError(Errors.UPSTREAM_TIMEOUT, { message: 'lookup timed out' }))),
    )),
  },
  { name: 'none', after: 'meter', create: () => only('alpha_none', filter(() => false)) },
  { name: 'twice', after: 'route', create: () => only('alpha_twice', mergeMap((ctx) => of(ctx, ctx))) },
  { name: 'open', after: 'route', create: () => only('alpha_open', mergeMap((ctx) => concat(of(ctx), NEVER))) },
  // Last in the order, after checkResult.
  { name: 'last', after: 'checkResult', create: () => map((ctx) => { seenAt.push('last'); return ctx; }) },
  { name: 'beta-only', after: 'authenticate', families: ['beta'], create: () => map((ctx) => { betaSeen++; return ctx; }) },
];
const plugin: TollgatePlugin = {
  name: 'operator-stages',
  register(container) {
    container.register(Tokens.Family, { useValue: alpha });
    container.register(Tokens.Family, { useValue: beta });
    for (const stage of stages) container.register(Tokens.Stage, { useValue: stage });
  },
};

const KEY = 'operator-stage-key-01';
const gateway = await createGateway({
  config: {
    log: { level: 'silent' },
    server: { host: '127.0.0.1', port: 0 },
    keys: [{ key: KEY, id: 'ops', plan: 'growth' }],
    networks: [
      { name: 'a', families: ['alpha'], upstreams: [{ url: upstream.url }] },
      { name: 'b', families: ['beta'], upstreams: [{ url: upstream.url }] },
    ],
  },
  plugins: [httpTransport(), plugin],
});
t.teardown(() => gateway.close());
const server = await gateway.listen();
const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
const ledger = gateway.container.resolve(Tokens.CreditLedger);
const used = async (): Promise<number> => (await ledger.balance('ops', 1e12, new Date())).used;

async function post(network: string, methodName: string): Promise<{ status: number; body: { result?: unknown; error?: { code: number; message: string } } }> {
  const response = await fetch(`${origin}/${network}/v3/${KEY}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: methodName, params: [] }),
  });
  return { status: response.status, body: await response.json() as { result?: unknown; error?: { code: number; message: string } } };
}

t.test('timeout + retry inside a stage get past a hanging lookup; the call is answered and charged once', async (t) => {
  const before = await used();
  const answer = await post('a', 'alpha_ping');
  t.same(answer, { status: 200, body: { jsonrpc: '2.0', id: 7, result: '0x1' } });
  t.equal(lookups, 2, 'the first lookup timed out, the retry answered');
  t.equal(await used(), before + 5, 'charged once');
  t.same(seenAt.slice(-2), ['first', 'last'], 'stages before authenticate and after checkResult ran');
});

t.test('a stage whose own timeout fires fails the call with its coded error, refunded', async (t) => {
  const before = await used();
  const received = upstream.received();
  const answer = await post('a', 'alpha_slow');
  t.equal(answer.status, 504);
  t.match(answer.body, { id: 7, error: { code: Errors.UPSTREAM_TIMEOUT.code, message: 'lookup timed out' } });
  t.equal(upstream.received(), received, 'the node was never asked');
  t.equal(await used(), before, 'the debit was refunded');
});

t.test('a stage that emits no context fails the call with STAGE_CONTRACT_VIOLATED, not a hang', async (t) => {
  const before = await used();
  const answer = await post('a', 'alpha_none');
  t.equal(answer.status, 500);
  t.match(answer.body, { id: 7, error: { code: Errors.STAGE_CONTRACT_VIOLATED.code, message: /"none" completed without emitting its context/ } });
  t.equal(await used(), before, 'not charged');
});

t.test('a stage that emits twice fails the call once with STAGE_CONTRACT_VIOLATED, not two answers', async (t) => {
  const before = await used();
  const received = upstream.received();
  const answer = await post('a', 'alpha_twice');
  t.equal(answer.status, 500);
  t.match(answer.body, { id: 7, error: { code: Errors.STAGE_CONTRACT_VIOLATED.code, message: /"twice" emitted more than one context/ } });
  t.equal(upstream.received(), received, 'dispatch never ran');
  t.equal(await used(), before, 'not charged');
});

t.test('a stage that emits its context and never completes does not hold the call', async (t) => {
  const answer = await post('a', 'alpha_open');
  t.same(answer, { status: 200, body: { jsonrpc: '2.0', id: 7, result: '0x1' } });
});

t.test('a stage declaring its families runs only on networks of those families', async (t) => {
  const before = betaSeen;
  t.equal((await post('a', 'alpha_open')).status, 200);
  t.equal(betaSeen, before, 'not on network a (alpha)');
  t.same(await post('b', 'beta_ping'), { status: 200, body: { jsonrpc: '2.0', id: 7, result: '0x1' } });
  t.equal(betaSeen, before + 1, 'once on network b (beta)');
});

t.test('operator stages are type-checked as operators over the context', async (t) => {
  // @ts-expect-error a stage must emit the context, not another type
  const wrong: Stage = map(() => 42);
  t.type(wrong, 'function');
});
