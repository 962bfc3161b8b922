/**
 * The gateway's pipeline composed with plain RxJS behaves as its fused fast path: two gateways with the
 * same config and plugins (the evm family, the response cache, security, file storage and a probe plugin), one running
 * each call with `gateway.execute(ctx)` (the fused loop), the other with
 * `of(ctx).pipe(...gateway.stagesOf(ctx), settleCall(ctx, gateway))`, get the same calls in the same
 * order. Their answers, charges, debits, refunds, usage records and the stages each call passed must be
 * the same, for answered and refused calls and for a call cancelled at every stage boundary and inside
 * every stage that waits (by unsubscribing and by the call's AbortSignal): it stops there, a debit made
 * is refunded exactly once, and an upstream request in flight is aborted on the real node.
 */
import t from 'tap';
import { from, map, mergeMap, of, type Observable, type Subscription } from 'rxjs';
import {
  CORE_STAGES,
  Tokens,
  settleCall,
  step,
  type MaybePromise,
  type RequestContext,
} from '../core/plugin-api.js';
import type { MethodDefinition, NetworkFamily } from '../core/family-api.js';
import { type Gateway, type TollgatePlugin } from '../core/index.js';
import type { CreditLedger, KeyStore, RateLimiter, UsageEvent, UsageRecorder } from '../core/store-api.js';
import { evmFamily } from '../plugins/evm/index.js';
import { responseCache } from '../plugins/cache/index.js';
import { security } from '../plugins/security/index.js';
import { ipfs, IPFS_REQUEST } from '../plugins/ipfs/index.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';
import { startHoldingUpstream } from './helpers/holding-upstream.js';
import { closedPort } from './helpers/closed-port.js';
import { until } from './helpers/until.js';
import { startKuboStub } from './helpers/kubo-stub.js';

const upstream = await startHoldingUpstream();
t.teardown(() => upstream.close());

/**
 * What one gateway's stores and stages saw: key lookups, rate takes, debits, refunds, usage records,
 * finished calls and the gates each call passed. One point may be armed: the next call to reach it
 * waits there until released (after the test cancelled the call).
 */
class Probe {
  finds = 0;
  takes = 0;
  debits = 0;
  refunds = 0;
  finished = 0;
  readonly usage: UsageEvent[] = [];
  readonly passed: string[] = [];
  #armed: string | undefined;
  #release: (() => void) | undefined;

  arm(point: string): void {
    this.#armed = point;
  }

  get entered(): boolean {
    return this.#release !== undefined;
  }

  /** `work()` now, or, at the armed point, once released. */
  hold<T>(point: string, work: () => MaybePromise<T>): MaybePromise<T> {
    if (this.#armed !== point) return work();
    this.#armed = undefined;
    return new Promise<T>((resolve, reject) => {
      this.#release = () => {
        try {
          resolve(work());
        } catch (error) {
          reject(error);
        }
      };
    });
  }

  release(): void {
    const release = this.#release;
    this.#release = undefined;
    release?.();
  }
}

const limited = (probe: Probe): MethodDefinition => ({ name: 'held_ping', credits: 7, params: { type: 'array' }, limits: () => probe.hold('limits', () => undefined) });
const heldFamily = (probe: Probe): NetworkFamily => ({ name: 'held', methods: [limited(probe), { name: 'held_hold', credits: 7, params: { type: 'array' } }] });

/** The probe plugin: store wrappers, a gate step after every core stage, an operator stage, a call observer. */
function probePlugin(probe: Probe): TollgatePlugin {
  return {
    name: 'probe',
    register(container) {
      container.register(Tokens.Family, { useValue: heldFamily(probe) });
      const keys = container.resolve<KeyStore>(Tokens.KeyStore);
      container.register(Tokens.KeyStore, { useValue: { find: (key: string) => (probe.finds++, probe.hold('find', () => keys.find(key))) } satisfies KeyStore });
      const limiter = container.resolve<RateLimiter>(Tokens.RateLimiter);
      container.register(Tokens.RateLimiter, { useValue: { take: (...args) => (probe.takes++, probe.hold('take', () => limiter.take(...args))) } satisfies RateLimiter });
      const ledger = container.resolve<CreditLedger>(Tokens.CreditLedger);
      container.register(Tokens.CreditLedger, {
        useValue: {
          debit: (...args) => (probe.debits++, probe.hold('debit', () => ledger.debit(...args))),
          refund: (receipt) => (probe.refunds++, ledger.refund(receipt)),
          balance: (...args) => ledger.balance(...args),
          topUp: (...args) => ledger.topUp(...args),
        } satisfies CreditLedger,
      });
      const usage = container.resolve<UsageRecorder>(Tokens.UsageRecorder);
      container.register(Tokens.UsageRecorder, { useValue: { record: (event) => { probe.usage.push(event); return usage.record(event); } } satisfies UsageRecorder });
      container.register(Tokens.CallObserver, { useValue: { callFinished: () => void probe.finished++ } });
      for (const stage of CORE_STAGES) {
        const name = `gate:${stage}`;
        container.register(Tokens.Stage, { useValue: { name, after: stage, create: () => step(() => { probe.passed.push(name); return probe.hold(name, () => undefined); }) } });
      }
      // An operator stage, not a step: cancelling must leave it at once on both paths.
      container.register(Tokens.Stage, {
        useValue: {
          name: 'park',
          after: 'route',
          create: () => mergeMap((ctx: RequestContext) => from(Promise.resolve(probe.hold('park', () => undefined))).pipe(map(() => { probe.passed.push('park'); return ctx; }))),
        },
      });
    },
  };
}

// A file-storage node: `version` and `object/get` answered whole, anything else with kubo's own error.
const kubo = await startKuboStub((req, res) => {
  req.resume();
  const path = req.url ?? '';
  const body = path.startsWith('/api/v0/version') ? '{"Version":"0.29.0"}' : path.startsWith('/api/v0/object/get') ? '{"Links":[],"Data":"hello"}' : '{"Message":"no link named \\"x\\"","Code":0,"Type":"error"}';
  res.writeHead(path.includes('object/get') || path.includes('version') ? 200 : 500, { 'content-type': 'application/json' });
  res.end(body);
});
t.teardown(() => kubo.close());

const KEY = 'pipe-equivalence-key-01';
const SECRET = 'pipe-equivalence-secret-01';
const TINY = 'pipe-equivalence-tiny-01';
const down = await closedPort();

interface Side {
  readonly name: string;
  readonly probe: Probe;
  readonly gw: TestGateway;
  run(ctx: RequestContext): Observable<RequestContext>;
}

async function side(name: string, compose: (gateway: Gateway) => (ctx: RequestContext) => Observable<RequestContext>): Promise<Side> {
  const probe = new Probe();
  const gw = await startTestGateway(
    {
      keys: [{ key: KEY, id: 'k', plan: 'growth', secret: SECRET }, { key: TINY, id: 'tiny', plan: 'tiny' }],
      plans: { tiny: { dailyCredits: 100, creditsPerSecond: 1_000, failover: false } },
      networks: [
        { name: 'held', families: ['held'], upstreams: [{ url: upstream.url }] },
        { name: 'eth', families: ['evm'], upstreams: [{ url: upstream.url }] },
        { name: 'down', families: ['held'], upstreams: [{ url: `http://127.0.0.1:${down}` }] },
        { name: 'files', families: ['ipfs'], upstreams: [{ url: kubo.url }] },
      ],
      upstreamDefaults: { timeoutMs: 60_000 },
    },
    // The file-storage refusal budget (scrypt checks per second) is set out of the way: the two sides
    // check secrets in the same second, and the budget's 429 would depend on timing.
    [evmFamily(), responseCache(), security(), ipfs({ secretChecksPerSourcePerSecond: 1000, secretChecksPerSecond: 1000 }), probePlugin(probe)],
  );
  t.teardown(() => gw.close());
  return { name, probe, gw, run: compose(gw.gateway) };
}

const fused = await side('fused', (gateway) => (ctx) => gateway.execute(ctx));
// Plain RxJS: each stage applied in turn (what `pipe()` does with a list; its typings take operators by
// position only), then the closing operator.
const piped = await side('pipe', (gateway) => (ctx) =>
  gateway.stagesOf(ctx).reduce((source, stage) => source.pipe(stage), of(ctx)).pipe(settleCall(ctx, gateway)));

async function used(s: Side, keyId: string): Promise<number> {
  return (await s.gw.gateway.container.resolve<CreditLedger>(Tokens.CreditLedger).balance(keyId, 1e12, new Date())).used;
}

interface CallSpec {
  readonly network: string;
  readonly method: string;
  readonly params?: unknown;
  readonly key?: string;
  /** A file-storage call's secret: the call is made as the file-storage transport makes it. */
  readonly secret?: string;
  readonly signal?: AbortSignal;
}

function contextOf(s: Side, spec: CallSpec): RequestContext {
  const network = s.gw.gateway.networks.get(spec.network);
  if (network === undefined) throw new Error(`no network ${spec.network}`);
  const files = spec.secret !== undefined;
  const ctx = s.gw.gateway.createContext({
    transport: files ? 'ipfs' : 'direct',
    network,
    credentials: { apiKey: spec.key ?? KEY, ...(files ? { secret: spec.secret } : {}) },
    call: files ? { method: spec.method, params: spec.params ?? [[], {}] } : { method: spec.method, params: spec.params ?? [], id: 1 },
    meta: { remoteAddress: '127.0.0.1' },
    ...(spec.signal === undefined ? {} : { signal: spec.signal }),
  });
  if (files) ctx.state.set(IPFS_REQUEST, {});
  return ctx;
}

/** Counters before a call, to report what the call changed. */
interface Mark {
  readonly used: number;
  readonly finds: number;
  readonly takes: number;
  readonly debits: number;
  readonly refunds: number;
  readonly usage: number;
  readonly passed: number;
  readonly finished: number;
}

async function mark(s: Side, keyId: string): Promise<Mark> {
  const p = s.probe;
  return { used: await used(s, keyId), finds: p.finds, takes: p.takes, debits: p.debits, refunds: p.refunds, usage: p.usage.length, passed: p.passed.length, finished: p.finished };
}

/** What a call did, comparable across the two sides. */
async function outcome(s: Side, ctx: RequestContext, before: Mark, keyId: string, emitted: number): Promise<Record<string, unknown>> {
  const p = s.probe;
  const body = ctx.reply?.body;
  return {
    emitted,
    error: ctx.error === undefined ? undefined : { code: ctx.error.code, message: ctx.error.message },
    reply: ctx.reply === undefined ? undefined : { status: ctx.reply.status, body: body instanceof Uint8Array ? Buffer.from(body).toString('utf8') : typeof body },
    servedBy: ctx.servedBy?.name,
    cache: ctx.cache,
    charged: (await used(s, keyId)) - before.used,
    finds: p.finds - before.finds,
    takes: p.takes - before.takes,
    debits: p.debits - before.debits,
    refunds: p.refunds - before.refunds,
    usage: p.usage.slice(before.usage).map(({ at: _at, ...event }) => event),
    passed: p.passed.slice(before.passed),
    finished: p.finished - before.finished,
  };
}

/** Runs one call to its end on one side. */
async function answer(s: Side, spec: CallSpec, keyId = 'k'): Promise<Record<string, unknown>> {
  const before = await mark(s, keyId);
  const ctx = contextOf(s, spec);
  const outs: RequestContext[] = [];
  s.run(ctx).subscribe((out) => outs.push(out));
  await until(`${s.name}: ${spec.method} finished`, () => outs.length === 1);
  return outcome(s, ctx, before, keyId, outs.length);
}

const ADDRESS = `0x${'11'.repeat(20)}`;
const calls: Array<[string, CallSpec, string?]> = [
  ['an answered call', { network: 'held', method: 'held_ping' }],
  ['an evm call, answered and stored by the cache', { network: 'eth', method: 'eth_chainId' }],
  ['the same call again, from the cache', { network: 'eth', method: 'eth_chainId' }],
  ['an evm call with params', { network: 'eth', method: 'eth_getBalance', params: [ADDRESS, 'latest'] }],
  ['invalid params: refused before meter', { network: 'eth', method: 'eth_getBalance', params: ['nope'] }],
  ['an unknown method', { network: 'eth', method: 'eth_noSuchMethod' }],
  ['an unknown key', { network: 'eth', method: 'eth_chainId', key: 'no-such-key-000000001' }],
  ['no upstream answers: debited, then refunded', { network: 'down', method: 'held_ping' }],
  ['a small plan: the first call is charged', { network: 'eth', method: 'eth_getBalance', params: [ADDRESS, 'latest'], key: TINY }, 'tiny'],
  ['a small plan: the second is over its daily credits', { network: 'eth', method: 'eth_getBalance', params: [ADDRESS, 'latest'], key: TINY }, 'tiny'],
  ['file storage: a whole answer, the secret verified', { network: 'files', method: 'version', secret: SECRET }],
  ['file storage: object/get with checked options', { network: 'files', method: 'object/get', params: [['QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o'], { 'data-encoding': 'text' }], secret: SECRET }],
  ['file storage: invalid options refused', { network: 'files', method: 'object/get', params: [['QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o'], { 'data-encoding': 'hex' }], secret: SECRET }],
  ['file storage: a wrong secret', { network: 'files', method: 'version', secret: 'wrong-secret-000000001' }],
  ['file storage: an unknown key (the decoy check)', { network: 'files', method: 'version', key: 'no-such-key-000000001', secret: SECRET }],
  ['file storage: a key without a secret', { network: 'files', method: 'version', key: TINY, secret: SECRET }, 'tiny'],
];

t.test('the same calls, answered and refused, end the same way on both paths', async (t) => {
  for (const [what, spec, keyId] of calls) {
    const a = await answer(fused, spec, keyId);
    const b = await answer(piped, spec, keyId);
    t.same(b, a, what);
  }
  // The calls did what their names say (on the fused path; the pipe path is the same).
  const again = await answer(fused, { network: 'eth', method: 'eth_chainId' });
  t.equal(again.cache, 'hit');
  t.equal(again.finds, 1, 'one key lookup per call');
  const files = await answer(piped, { network: 'files', method: 'version', secret: SECRET });
  t.match(files, { reply: { status: 200, body: '{"Version":"0.29.0"}' }, finds: 1, usage: [{ method: 'version', calls: 1, bytes: 20, failed: false }] }, 'the file-storage stages answer composed too');
  const refused = await answer(piped, { network: 'files', method: 'version', secret: 'wrong-secret-000000001' });
  t.match(refused, { error: { code: -33001 }, finds: 1 });
});

/** Where a call can be held: a gate after each core stage, a store call or hook inside a stage, the operator stage, the node. */
const points = [
  'find',
  ...CORE_STAGES.map((stage) => `gate:${stage}`),
  'take',
  'debit',
  'limits',
  'park',
  'upstream',
];

type How = 'unsubscribe' | 'signal';

/** Starts a call, holds it at `point`, cancels it `how`, lets the point go, and waits for the call's end. */
async function cancelAt(s: Side, point: string, how: How): Promise<Record<string, unknown>> {
  const spec: CallSpec = { network: 'held', method: point === 'upstream' ? 'held_hold' : 'held_ping' };
  const before = await mark(s, 'k');
  const aborted = upstream.aborted();
  if (point !== 'upstream') s.probe.arm(point);
  const abort = new AbortController();
  const ctx = contextOf(s, { ...spec, signal: abort.signal });
  const outs: RequestContext[] = [];
  const subscription: Subscription = s.run(ctx).subscribe((out) => outs.push(out));
  await until(`${s.name}: the call waits at ${point}`, () => (point === 'upstream' ? upstream.held() === 1 : s.probe.entered));
  if (how === 'unsubscribe') subscription.unsubscribe();
  else abort.abort();
  if (point === 'upstream') await until(`${s.name}: the node saw its request aborted`, () => upstream.aborted() === aborted + 1);
  else s.probe.release();
  await until(`${s.name}: the call finished`, () => s.probe.finished === before.finished + 1);
  const result = await outcome(s, ctx, before, 'k', outs.length);
  return { ...result, upstreamAborted: upstream.aborted() - aborted };
}

for (const how of ['unsubscribe', 'signal'] as const) {
  t.test(`a call cancelled (${how}) at every stage boundary and inside every waiting stage ends the same way on both paths`, async (t) => {
    for (const point of points) {
      const a = await cancelAt(fused, point, how);
      const b = await cancelAt(piped, point, how);
      t.same(b, a, `${point}: the same on both paths`);
      // What a cancelled call must do, on either path.
      t.equal(a.charged, 0, `${point}: the ledger ends where it started`);
      t.equal(a.refunds, a.debits, `${point}: a debit made is refunded, exactly once`);
      t.ok((a.debits as number) <= 1, `${point}: debited at most once`);
      t.equal(a.emitted, how === 'signal' ? 1 : 0, `${point}: an answer only to a subscriber still there`);
      t.match(a.error, { message: /went away|aborted|cancel/i }, `${point}: failed as a call whose client left`);
      t.equal(a.upstreamAborted, point === 'upstream' ? 1 : 0, `${point}: the node's request aborted only when there was one`);
      for (const event of a.usage as UsageEvent[]) t.match(event, { credits: 0, bytes: 0, failed: true, calls: 1 }, `${point}: recorded as a failed call, nothing charged`);
    }
  });
}

t.test('the run stops at the boundary after the point it was cancelled at', async (t) => {
  const gates = (passed: unknown): string[] => (passed as string[]).filter((g) => g.startsWith('gate:'));
  t.same(gates((await cancelAt(fused, 'find', 'unsubscribe')).passed), [], 'cancelled in authenticate: no later stage ran');
  t.same(gates((await cancelAt(piped, 'gate:validate', 'signal')).passed), ['gate:authenticate', 'gate:validate'], 'cancelled after validate: meter never ran');
  const inDebit = await cancelAt(piped, 'debit', 'unsubscribe');
  t.same(gates(inDebit.passed), ['gate:authenticate', 'gate:validate'], 'cancelled inside meter: the debit it started was waited for, nothing after it ran');
  t.equal(inDebit.debits, 1);
  t.equal(inDebit.refunds, 1);
});

t.test('a call cancelled before it starts runs no stage on either path', async (t) => {
  for (const s of [fused, piped]) {
    const before = await mark(s, 'k');
    const abort = new AbortController();
    abort.abort();
    const ctx = contextOf(s, { network: 'held', method: 'held_ping', signal: abort.signal });
    const outs: RequestContext[] = [];
    s.run(ctx).subscribe((out) => outs.push(out));
    const result = await outcome(s, ctx, before, 'k', outs.length);
    t.match(result, { emitted: 1, finds: 0, debits: 0, passed: [], usage: [], finished: 1 }, `${s.name}: nothing ran, nothing recorded (no key was read)`);
  }
});
