/**
 * A stage that breaks the one-context-in, one-context-out contract fails the call where it runs, on
 * both paths: the gateway's own run (`gateway.execute(ctx)`) and the composed form
 * (`stagesOf(ctx)` piped and closed with `settleCall`). A stage that emits the context twice, emits
 * another object, or emits nothing, placed after `validate` of a 7-credit method, fails the call with
 * `STAGE_CONTRACT_VIOLATED` naming the stage: no later stage runs, so the node gets no request and
 * nothing is charged. A stage scoped to one transport runs (and fails the call) on that transport only.
 * A stage that retries its own work re-runs only itself (`meter` before it debits once).
 */
import t, { type Test } from 'tap';
import { EMPTY, mergeMap, of, retry, throwError, type Observable } from 'rxjs';
import { Tokens, settleCall, type RequestContext, type Stage, type StageDefinition } from '../core/plugin-api.js';
import { type Gateway, type TollgatePlugin } from '../core/index.js';
import type { CreditLedger, UsageEvent, UsageRecorder } from '../core/store-api.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';
import { startHoldingUpstream } from './helpers/holding-upstream.js';
import { until } from './helpers/until.js';

const node = await startHoldingUpstream();
t.teardown(() => node.close());

const KEY = 'pipe-contract-key-000001';
const METHODS = ['held_ping', 'held_twice', 'held_swap', 'held_none', 'held_retry'] as const;

/** A stage that breaks the contract for one method only, and passes every other call on. */
const breaking = (name: string, method: string, out: (ctx: RequestContext) => Observable<RequestContext>): StageDefinition => ({
  name,
  after: 'validate',
  create: (): Stage => mergeMap((ctx: RequestContext) => (ctx.call.method === method ? out(ctx) : of(ctx))),
});

/** The family of 7-credit methods, the breaking stages, and a usage tap. */
function contractPlugin(usage: UsageEvent[]): TollgatePlugin {
  const tried = new WeakSet<RequestContext>();
  return {
    name: 'contract-probe',
    register(container) {
      container.register(Tokens.Family, { useValue: { name: 'held', methods: METHODS.map((name) => ({ name, credits: 7, params: { type: 'array' } })) } });
      const recorder = container.resolve<UsageRecorder>(Tokens.UsageRecorder);
      container.register(Tokens.UsageRecorder, { useValue: { record: (event) => { usage.push(event); return recorder.record(event); } } satisfies UsageRecorder });
      const stages: StageDefinition[] = [
        breaking('twice', 'held_twice', (ctx) => of(ctx, ctx)),
        // Another object than the context it received: a copy of it.
        breaking('swap', 'held_swap', (ctx) => of(Object.assign(Object.create(Object.getPrototypeOf(ctx) as object) as RequestContext, ctx))),
        breaking('none', 'held_none', () => EMPTY),
        // Retries its own work, which fails on a call's first attempt: `retry` on the stage's source
        // re-runs only this stage, since the stage is applied to each call on its own.
        { name: 'flaky', after: 'meter', create: () => (source) => source.pipe(mergeMap((ctx: RequestContext) => (ctx.call.method === 'held_retry' && !tried.has(ctx) ? (tried.add(ctx), throwError(() => new Error('first attempt'))) : of(ctx))), retry(1)) },
        // Scoped by transport: on HTTP calls only, and there it emits every call twice.
        { name: 'httpTwice', after: 'validate', transports: ['http'], create: () => mergeMap((ctx: RequestContext) => of(ctx, ctx)) },
      ];
      for (const stage of stages) container.register(Tokens.Stage, { useValue: stage });
    },
  };
}

interface Side {
  readonly name: string;
  readonly gw: TestGateway;
  readonly usage: UsageEvent[];
  run(ctx: RequestContext): Observable<RequestContext>;
}

async function side(name: string, compose: (gateway: Gateway) => (ctx: RequestContext) => Observable<RequestContext>): Promise<Side> {
  const usage: UsageEvent[] = [];
  const gw = await startTestGateway(
    {
      keys: [{ key: KEY, id: 'k', plan: 'growth' }],
      networks: [{ name: 'held', families: ['held'], upstreams: [{ url: node.url }] }],
    },
    [contractPlugin(usage)],
  );
  t.teardown(() => gw.close());
  return { name, gw, usage, run: compose(gw.gateway) };
}

const engine = await side('execute', (gateway) => (ctx) => gateway.execute(ctx));
const composed = await side('composed', (gateway) => (ctx) =>
  gateway.stagesOf(ctx).reduce((source, stage) => source.pipe(stage), of(ctx)).pipe(settleCall(ctx, gateway)));

async function used(s: Side): Promise<number> {
  return (await s.gw.gateway.container.resolve<CreditLedger>(Tokens.CreditLedger).balance('k', 1e12, new Date())).used;
}

function contextOf(s: Side, method: string, transport: string): RequestContext {
  const network = s.gw.gateway.networks.get('held')!;
  return s.gw.gateway.createContext({ transport, network, credentials: { apiKey: KEY }, call: { method, params: [], id: 1 }, meta: { remoteAddress: '127.0.0.1' } });
}

/** Runs one call to its end on one side: what it answered, what the node received, what it charged. */
async function call(s: Side, method: string, transport: string): Promise<Record<string, unknown>> {
  const charged = await used(s);
  const requests = node.received();
  const recorded = s.usage.length;
  const ctx = contextOf(s, method, transport);
  const outs: RequestContext[] = [];
  let completed = false;
  s.run(ctx).subscribe({ next: (out) => outs.push(out), complete: () => { completed = true; } });
  await until(`${s.name}: ${method} over ${transport} finished`, () => completed);
  return {
    emitted: outs.length,
    error: ctx.error === undefined ? undefined : { code: ctx.error.code, entry: ctx.error.entry.name, message: ctx.error.message },
    answered: ctx.reply !== undefined,
    upstreamRequests: node.received() - requests,
    charged: (await used(s)) - charged,
    usage: s.usage.slice(recorded).map(({ at: _at, ...event }) => event),
  };
}

/** The same call on both paths: the outcomes must be the same; the engine's is returned. */
async function both(t: Test, method: string, transport: string, what: string): Promise<Record<string, unknown>> {
  const a = await call(engine, method, transport);
  const b = await call(composed, method, transport);
  t.same(b, a, `${what}: the composed form ends as the engine does`);
  return a;
}

/** What a call failed by a breaking stage must show, on either path. */
function violated(t: Test, outcome: Record<string, unknown>, stage: string, what: string): void {
  t.match(outcome, { emitted: 1, error: { entry: 'STAGE_CONTRACT_VIOLATED', message: new RegExp(`pipeline stage "${stage}" ${what}`) }, answered: false }, `${stage}: failed there, naming the stage`);
  t.equal(outcome.upstreamRequests, 0, `${stage}: no later stage ran, the node got no request`);
  t.equal(outcome.charged, 0, `${stage}: nothing charged`);
  t.match(outcome.usage, [{ calls: 1, credits: 0, failed: true }], `${stage}: recorded once, as a failed call`);
}

t.test('a call the breaking stages let through is answered and charged once on both paths', async (t) => {
  const outcome = await both(t, 'held_ping', 'direct', 'held_ping');
  t.match(outcome, { emitted: 1, error: undefined, answered: true, upstreamRequests: 1, charged: 7 });
});

t.test('a stage that emits the context twice fails the call before dispatch: no upstream request, no credits', async (t) => {
  violated(t, await both(t, 'held_twice', 'direct', 'emits twice'), 'twice', 'emitted more than one context');
});

t.test('a stage that emits another object than its context fails the call there', async (t) => {
  violated(t, await both(t, 'held_swap', 'direct', 'swaps the context'), 'swap', 'emitted another object than the context it received');
});

t.test('a stage that emits nothing fails the call there, naming the stage', async (t) => {
  violated(t, await both(t, 'held_none', 'direct', 'emits nothing'), 'none', 'completed without emitting its context');
});

t.test('a stage that retries its own work re-runs only itself on both paths: one debit, one request', async (t) => {
  const outcome = await both(t, 'held_retry', 'direct', 'retries');
  t.match(outcome, { emitted: 1, error: undefined, answered: true, upstreamRequests: 1, charged: 7, usage: [{ calls: 1, credits: 7, failed: false }] });
});

t.test('a stage scoped by transport runs on its transport only, on both paths', async (t) => {
  const other = await both(t, 'held_ping', 'direct', 'another transport');
  t.match(other, { error: undefined, answered: true, upstreamRequests: 1, charged: 7 }, 'another transport: the scoped stage is left out, the call is answered');
  violated(t, await both(t, 'held_ping', 'http', 'its transport'), 'httpTwice', 'emitted more than one context');
  const stages = (transport: string): number => composed.gw.gateway.stagesOf(contextOf(composed, 'held_ping', transport)).length;
  t.equal(stages('http'), stages('direct') + 1, 'an HTTP call runs one stage more than a direct one');
});
