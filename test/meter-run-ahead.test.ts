/**
 * A charge the store answers later lets a paying key's read go on to its node meanwhile, and nothing is
 * answered before the charge is taken: the first call of a key, a key that ran out and a method that
 * delivers something by being sent wait for their charge; a refusal wins over the node's answer; a
 * failure or a client that goes away while the charge is pending is refunded once, after it passed.
 *
 * The metering holds every charge until the test lets it go (the store answering later); the node is a
 * real HTTP server on loopback; what ran when is seen through a method's hooks (`limits` runs right
 * after `meter`, `checkResult` right after the node's answer) and a call observer (the call leaving).
 */
import t from 'tap';
import { createServer, type Server } from 'node:http';
import { request } from 'undici';
import type { AddressInfo } from 'node:net';
import { Tokens, type TollgatePlugin } from '../core/plugin-api.js';
import type { MethodDefinition, NetworkFamily } from '../core/family-api.js';
import { LimiterLedgerMetering, MemoryCreditLedger, MemoryRateLimiter, MeteringToken, type Charge, type ChargeLimits, type Metering } from '../core/store-api.js';
import { httpTransport } from '../plugins/http/index.js';
import { startTestGateway } from './helpers/gateway.js';
import { post, rpc } from './helpers/json-rpc.js';

/**
 * What happened, in order: `limits <id>`, `checked <id>`, `left <id>` (the call left the pipeline),
 * `node <id>` (the node read the call), `node closed <id>` (the gateway let go of a call the node held).
 */
const events: string[] = [];
const waiters = new Map<string, () => void>();
function record(event: string): void {
  events.push(event);
  waiters.get(event)?.();
  waiters.delete(event);
}
/** Resolves once `event` is recorded (at once if it was). */
function until(event: string): Promise<void> {
  if (events.includes(event)) return Promise.resolve();
  return new Promise((resolve) => waiters.set(event, resolve));
}
const idOf = (params: unknown): string => String((params as unknown[])[0]);

const read: MethodDefinition = {
  name: 'probe_read',
  credits: 10,
  params: { type: 'array', prefixItems: [{ type: 'string' }], minItems: 1, items: false },
  limits: ({ params }) => void record(`limits ${idOf(params)}`),
  checkResult: (_answer, ctx) => void record(`checked ${idOf(ctx.params)}`),
};
// Sending is the service (a transaction): never sent before its charge passed.
const send: MethodDefinition = { ...read, name: 'probe_send', idempotent: false };
const probeFamily: NetworkFamily = { name: 'probe', methods: [read, send] };

/** A charge asked of the held metering, answered when the test says. */
interface HeldCharge {
  readonly keyId: string;
  /** Answers with the real charge (taken from the memory stores now). */
  pass(): void;
  /** Answers with a refusal: the day's credits are spent. */
  refuse(): void;
}

/** A `Metering` whose every charge waits for the test: a store that answers later (Redis, SQLite). */
class HeldMetering implements Metering {
  readonly ledger = new MemoryCreditLedger();
  readonly #inner = new LimiterLedgerMetering(new MemoryRateLimiter(), this.ledger);
  readonly #asked: HeldCharge[] = [];
  #waiting: ((charge: HeldCharge) => void) | undefined;

  charge(keyId: string, credits: number, limits: ChargeLimits, now: number): Promise<Charge> {
    return new Promise((resolve) => {
      const held: HeldCharge = {
        keyId,
        pass: () => resolve(this.#inner.charge(keyId, credits, limits, now) as Charge),
        refuse: () => resolve({ ok: false, code: 'CREDITS_EXHAUSTED', remaining: 0, paidRemaining: 0, resetsAt: new Date(now + 3_600_000) }),
      };
      const waiting = this.#waiting;
      this.#waiting = undefined;
      if (waiting === undefined) this.#asked.push(held);
      else waiting(held);
    });
  }

  /** The next charge asked for (the one asked already, or the next to come). */
  next(): Promise<HeldCharge> {
    const asked = this.#asked.shift();
    if (asked !== undefined) return Promise.resolve(asked);
    return new Promise((resolve) => (this.#waiting = resolve));
  }

  async used(keyId: string): Promise<number> {
    return (await this.ledger.balance(keyId, 1_000_000, new Date())).used;
  }
}

/**
 * A node on loopback: answers each call at once; drops the connection of a call whose first param is
 * "drop"; holds a call whose first param starts with "hold" until the gateway lets go of it.
 */
async function startNode(): Promise<{ url: string; received: () => number; close: () => Promise<void> }> {
  let received = 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      received++;
      const call = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id: unknown; params: unknown[] };
      const id = String(call.params[0]);
      record(`node ${id}`);
      if (id === 'drop') return void res.destroy();
      if (id.startsWith('hold')) return void res.on('close', () => record(`node closed ${id}`));
      const body = JSON.stringify({ jsonrpc: '2.0', id: call.id, result: `node:${String(call.params[0])}` });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received: () => received,
    close: () => new Promise<void>((resolve) => { server.close(() => resolve()); server.closeAllConnections(); }),
  };
}

const metering = new HeldMetering();
/** Resolves when the call with this first param has left the pipeline (answered, failed or cancelled, compensations done). */
const leaving = new Map<string, () => void>();
const left = (id: string): Promise<void> => new Promise((resolve) => leaving.set(id, resolve));
const plugin: TollgatePlugin = {
  name: 'probe',
  register(container) {
    container.register(Tokens.Family, { useValue: probeFamily });
    container.register(MeteringToken, { useValue: metering });
    container.register(Tokens.CallObserver, {
      useValue: {
        callFinished: (ctx) => {
          const id = idOf(ctx.params ?? ctx.call.params);
          record(`left ${id}`);
          leaving.get(id)?.();
        },
      },
    });
  },
};

const node = await startNode();
t.teardown(() => node.close());
const gw = await startTestGateway(
  {
    plans: {
      metered: { dailyCredits: 1_000, creditsPerSecond: 1_000, failover: false },
      // 10 credits a call: 25 leave room for one call ahead after the first; 15 a second, likewise.
      small: { dailyCredits: 25, creditsPerSecond: 1_000, failover: false },
      slow: { dailyCredits: 1_000, creditsPerSecond: 15, failover: false },
    },
    keys: [
      { key: 'run-ahead-key-first-01', id: 'first', plan: 'metered' },
      { key: 'run-ahead-key-paying-1', id: 'paying', plan: 'metered' },
      { key: 'run-ahead-key-spent-01', id: 'spent', plan: 'metered' },
      { key: 'run-ahead-key-spent-02', id: 'spent2', plan: 'metered' },
      { key: 'run-ahead-key-writes-1', id: 'writes', plan: 'metered' },
      { key: 'run-ahead-key-faults-1', id: 'faults', plan: 'metered' },
      { key: 'run-ahead-key-small-01', id: 'small', plan: 'small' },
      { key: 'run-ahead-key-slow-001', id: 'slow', plan: 'slow' },
    ],
    networks: [{ name: 'probe', families: ['probe'], upstreams: [{ url: node.url }] }],
  },
  [httpTransport(), plugin],
);
t.teardown(() => gw.close());

/** Whether `event` happened by the time the microtasks queued now have run. */
async function happenedBy(event: string): Promise<boolean> {
  await Promise.resolve();
  return events.includes(event);
}

/** A call whose charge is held: resolves with the held charge once asked, and with the answer. */
async function call(key: string, method: string, id: string): Promise<{ charge: HeldCharge; answer: ReturnType<typeof post> }> {
  const answer = post(gw.url('probe', key), rpc(method, [id]));
  return { charge: await metering.next(), answer };
}

/** Makes a key paying: one call whose charge passes. */
async function pay(key: string, id: string): Promise<void> {
  const first = await call(key, 'probe_read', id);
  first.charge.pass();
  t.equal((await first.answer).status, 200);
}

t.test('the first call of a key waits for its charge: nothing after meter runs until it passes', async (t) => {
  const first = await call('run-ahead-key-first-01', 'probe_read', 'a1');
  t.notOk(await happenedBy('limits a1'), 'the call waits at meter: the key has not paid here yet');
  const received = node.received();
  first.charge.pass();
  const answer = await first.answer;
  t.same(answer.json, { jsonrpc: '2.0', id: 1, result: 'node:a1' });
  t.equal(node.received(), received + 1);
  t.equal(await metering.used('first'), 10);
});

t.test('a paying key\'s read reaches its node while its charge is pending, and its answer waits for the charge', async (t) => {
  await pay('run-ahead-key-paying-1', 'b0');
  const pending = await call('run-ahead-key-paying-1', 'probe_read', 'b1');
  t.ok(await happenedBy('limits b1'), 'the stages after meter run at once');
  await until('checked b1');
  t.notOk(await happenedBy('left b1'), 'the node answered and the answer was checked, but the call does not leave before its charge');
  pending.charge.pass();
  const answer = await pending.answer;
  t.same(answer.json, { jsonrpc: '2.0', id: 1, result: 'node:b1' });
  t.equal(await metering.used('paying'), 20, 'both calls charged, once each');
});

t.test('a refused charge wins over the node\'s answer; the key that ran out then waits for its charges', async (t) => {
  await pay('run-ahead-key-spent-01', 'c0');
  const before = node.received();
  const refused = await call('run-ahead-key-spent-01', 'probe_read', 'c1');
  const gone = left('c1');
  await until('node c1');
  refused.charge.refuse();
  const answer = await refused.answer;
  await gone;
  t.equal(answer.status, 402, 'the refusal, not the node\'s answer');
  t.match(answer.json, { error: { code: -33000 } });
  t.notMatch(answer.text, /node:c1/, 'the node\'s result never reaches the client');
  t.equal(node.received(), before + 1, 'the call ran ahead to the node, whose answer is dropped');

  const next = await call('run-ahead-key-spent-01', 'probe_read', 'c2');
  t.notOk(await happenedBy('limits c2'), 'a key whose last charge was refused waits at meter');
  const reached = node.received();
  next.charge.refuse();
  t.equal((await next.answer).status, 402);
  t.equal(node.received(), reached, 'and never reaches the node');
  t.equal(await metering.used('spent'), 10, 'only the served call is charged');
});

t.test('a refused charge lets go of the node\'s request at once: the client is not kept waiting for the node', async (t) => {
  await pay('run-ahead-key-spent-02', 'f0');
  const held = await call('run-ahead-key-spent-02', 'probe_read', 'hold f1');
  await until('node hold f1');
  held.charge.refuse();
  await until('node closed hold f1');
  const answer = await held.answer;
  t.equal(answer.status, 402, 'the refusal, at once, while the node still held the call');
  t.equal(await metering.used('spent2'), 10);
});

// The memory stores behind the held charges hold their own balance and bucket: `small` has 5 credits
// left after two calls, `slow` a bucket of 15 that two calls of 10 empty.
for (const [key, keyId, what, secondStatus, thirdStatus] of [
  ['run-ahead-key-small-01', 'small', 'what its last charge left it', 200, 402],
  ['run-ahead-key-slow-001', 'slow', 'a second of its throughput', 429, 429],
] as const) {
  t.test(`the calls running ahead of their charges fit within ${what}`, async (t) => {
    await pay(key, `${keyId} 0`);
    const second = await call(key, 'probe_read', `${keyId} 1`);
    t.ok(await happenedBy(`limits ${keyId} 1`), 'one call of 10 credits fits in the 15 left: it runs ahead');
    const third = await call(key, 'probe_read', `${keyId} 2`);
    t.notOk(await happenedBy(`limits ${keyId} 2`), 'a second one does not fit beside it: it waits for its charge');
    second.charge.pass();
    t.equal((await second.answer).status, secondStatus, 'the call that ran ahead is answered as its charge says');
    third.charge.pass();
    t.equal((await third.answer).status, thirdStatus, 'the one that waited is refused at meter');
    t.notOk(events.includes(`limits ${keyId} 2`), 'and never went past it');
  });
}

t.test('a method that delivers by being sent (idempotent: false) waits for its charge, even for a paying key', async (t) => {
  await pay('run-ahead-key-writes-1', 'd0');
  const write = await call('run-ahead-key-writes-1', 'probe_send', 'd1');
  t.notOk(await happenedBy('limits d1'), 'nothing after meter runs before the charge');
  const received = node.received();
  write.charge.refuse();
  t.equal((await write.answer).status, 402);
  t.equal(node.received(), received, 'the refused send never reached the node');
});

t.test('a call that fails or is cancelled while its charge is pending is refunded once, after the charge passed', async (t) => {
  await pay('run-ahead-key-faults-1', 'e0');
  t.equal(await metering.used('faults'), 10);

  // The node drops the connection while the charge is held: the call fails, and its charge, passing
  // after, is given back.
  const dropped = await call('run-ahead-key-faults-1', 'probe_read', 'drop');
  const droppedLeft = left('drop');
  await until('node drop');
  dropped.charge.pass();
  const failed = await dropped.answer;
  await droppedLeft;
  t.not(failed.status, 200, 'the node failed the call');
  t.equal(await metering.used('faults'), 10, 'its charge passed after the failure and was refunded');

  // A refund is not a refusal: the key's next read runs ahead to the node, which holds it; the client
  // goes away; the gateway lets go of the node's call; then the charge passes and is given back.
  const controller = new AbortController();
  const answer = request(gw.url('probe', 'run-ahead-key-faults-1'), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(rpc('probe_read', ['hold e2'])), signal: controller.signal });
  const rejected = t.rejects(answer, 'the client went away');
  const cancelled = await metering.next();
  const cancelledLeft = left('hold e2');
  await until('node hold e2');
  controller.abort();
  await rejected;
  await until('node closed hold e2');
  t.notOk(events.includes('left hold e2'), 'the cancelled call waits for its pending charge');
  cancelled.pass();
  await cancelledLeft;
  t.equal(await metering.used('faults'), 10, 'the call nobody received is refunded once its charge passed');
  t.equal(events.filter((e) => e === 'left hold e2').length, 1, 'it left the pipeline once');
});
