import t from 'tap';
import { firstValueFrom } from 'rxjs';
import {
  ContextKey,
  Tokens,
  step,
  orderStages,
  type StageDefinition,
} from '../core/plugin-api.js';
import type { MethodDefinition } from '../core/family-api.js';
import {
  Errors,
  GatewayError,
  type TollgatePlugin,
} from '../core/index.js';
import {
  MemoryUsageRecorder,
  type CreditLedger,
} from '../core/store-api.js';
import { startTestGateway } from './helpers/gateway.js';
import { startReplayUpstream } from './helpers/replay-upstream.js';

// A real upstream on a socket that answers the recorded exchange below, and counts what it receives.
const upstream = await startReplayUpstream([
  { file: 'inline', comment: '', request: { jsonrpc: '2.0', id: 1, method: 'demo_echo', params: ['0x01'] }, response: { jsonrpc: '2.0', id: 1, result: '0x01' } },
]);
t.teardown(() => upstream.close());

const echo: MethodDefinition = {
  name: 'demo_echo',
  credits: 10,
  params: { type: 'array', prefixItems: [{ type: 'string' }], minItems: 1, items: false },
};
const SEEN = new ContextKey<string[]>('test.seen');
const order: string[] = [];
const stages: StageDefinition[] = [
  {
    name: 'deny-list',
    after: 'validate',
    create: () => step((ctx) => {
      order.push('deny-list');
      if (ctx.call.params !== undefined && JSON.stringify(ctx.call.params).includes('0xdead')) throw new GatewayError(Errors.FORBIDDEN, { message: 'denied' });
    }),
  },
  {
    name: 'audit',
    before: 'dispatch',
    create: () => step(async (ctx) => {
      order.push('audit');
      ctx.state.replace(SEEN, [...(ctx.state.get(SEEN) ?? []), 'audit']);
    }),
  },
  {
    name: 'after-audit',
    after: 'audit',
    create: () => step((ctx) => {
      order.push('after-audit');
      if (JSON.stringify(ctx.call.params).includes('0xbeef')) throw new GatewayError(Errors.LIMIT_EXCEEDED, { message: 'too beefy' });
    }),
  },
];
const plugin: TollgatePlugin = {
  name: 'demo',
  register(container) {
    container.register(Tokens.Family, { useValue: { name: 'demo', methods: [echo] } });
    for (const stage of stages) container.register(Tokens.Stage, { useValue: stage });
  },
};

const KEY = 'pipeline-test-key-01';
const gw = await startTestGateway(
  { keys: [{ key: KEY, id: 'p', plan: 'core' }], networks: [{ name: 'demo', families: ['demo'], upstreams: [{ url: upstream.url }] }] },
  [plugin],
);
t.teardown(() => gw.close());
const ledger = gw.gateway.container.resolve<CreditLedger>(Tokens.CreditLedger);
const used = async (): Promise<number> => (await ledger.balance('p', 1e9, new Date())).used;
const call = (params: unknown[]) => gw.gateway.handle({ network: 'demo', apiKey: KEY, body: { jsonrpc: '2.0', id: 1, method: 'demo_echo', params } });

t.test('plugin stages are placed relative to core stages and to each other', async (t) => {
  t.same(orderStages(stages), ['authenticate', 'validate', 'deny-list', 'meter', 'enforceLimits', 'route', 'audit', 'after-audit', 'dispatch', 'checkResult']);
  const at = (name: string, anchor: { after?: string; before?: string }) => ({ name, ...anchor, create: () => step(() => {}) });
  t.same(
    orderStages([at('a', { after: 'validate' }), at('b', { after: 'validate' }), at('c', { before: 'meter' }), at('d', { before: 'meter' })]),
    ['authenticate', 'validate', 'a', 'b', 'c', 'd', 'meter', 'enforceLimits', 'route', 'dispatch', 'checkResult'],
    'stages with the same anchor keep their registration order',
  );
  t.throws(() => orderStages([{ name: 'x', after: 'nowhere', create: () => step(() => {}) }]), /anchored to unknown stage "nowhere"/);
  t.throws(() => orderStages([{ name: 'meter', after: 'validate', create: () => step(() => {}) }]), /defined twice/);
});

t.test('the pipeline is lazy: nothing happens until subscribed', async (t) => {
  const before = upstream.received.length;
  const pending = call(['0x01']);
  await new Promise((resolve) => setTimeout(resolve, 50));
  t.equal(upstream.received.length, before, 'no upstream request before subscribing');
  t.equal(await used(), 0, 'nothing charged before subscribing');
  const out = await firstValueFrom(pending);
  t.equal(out.status, 200);
  t.same(JSON.parse(String(out.body)), { jsonrpc: '2.0', id: 1, result: '0x01' });
  t.equal(upstream.received.length, before + 1);
  t.equal(await used(), 10);
  t.equal(out.contexts[0]!.state.get(SEEN)?.[0], 'audit', 'plugin state travels on the context');
});

t.test('a stage before meter refuses without charging', async (t) => {
  const before = await used();
  const out = await firstValueFrom(call(['0xdead']));
  t.equal(out.status, 403);
  t.same(JSON.parse(String(out.body)), { jsonrpc: '2.0', id: 1, error: { code: -33100, message: 'denied' } });
  t.equal(await used(), before);
});

t.test('a failure after meter runs the compensation: the debit is refunded', async (t) => {
  const before = await used();
  const received = upstream.received.length;
  order.length = 0;
  const out = await firstValueFrom(call(['0xbeef']));
  t.equal(JSON.parse(String(out.body)).error.code, -32005);
  t.same(order, ['deny-list', 'audit', 'after-audit'], 'the failing stage stopped the pipeline');
  t.equal(upstream.received.length, received, 'nothing was dispatched');
  t.equal(await used(), before, 'refunded');
});

t.test('handle() answers unknown networks and never throws', async (t) => {
  const out = await firstValueFrom(gw.gateway.handle({ network: 'nope', apiKey: KEY, body: {} }));
  t.equal(out.status, 404);
  const parse = await firstValueFrom(gw.gateway.handle({ network: 'demo', apiKey: KEY, body: '{oops' }));
  t.equal(parse.status, 400);
  t.equal(JSON.parse(String(parse.body)).error.code, -32700);
});

t.test('every finished call is recorded in usage: calls, credits that stood, bytes, failures', async (t) => {
  const usage = gw.gateway.container.resolve(Tokens.UsageRecorder) as MemoryUsageRecorder;
  const day = new Date().toISOString().slice(0, 10);
  const before = usage.usage('p', day).demo_echo ?? { calls: 0, credits: 0, bytes: 0, failed: 0 };
  await firstValueFrom(call(['0x01']));
  await firstValueFrom(call(['0xbeef']));
  const after = usage.usage('p', day).demo_echo!;
  t.equal(after.calls - before.calls, 2);
  t.equal(after.credits - before.credits, 10, 'the refunded call adds no credits');
  t.equal(after.failed - before.failed, 1);
  t.equal(after.bytes - before.bytes, Buffer.byteLength(JSON.stringify({ jsonrpc: '2.0', id: 1, result: '0x01' })));
});
