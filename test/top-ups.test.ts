import t from 'tap';
import WebSocket from 'ws';
import { Errors, GatewayError, Tokens, TopUpsToken, step, type TollgatePlugin, type TopUpRequest } from '../core/plugin-api.js';
import type { CreditLedger } from '../core/store-api.js';
import { httpTransport } from '../plugins/http/index.js';
import { wsTransport } from '../plugins/ws/index.js';
import { evmFamily } from '../plugins/evm/index.js';
import { startTestGateway } from './helpers/gateway.js';
import { post, rpc } from './helpers/json-rpc.js';
import { startTinyUpstream } from './helpers/tiny-upstream.js';

// The TopUps port on its own, without any payment protocol: a plugin that points keys of one plan to a
// shop. The core adds its offer to the CREDITS_EXHAUSTED refusal; the WebSocket's 4402 reason gets its hint.

const upstream = await startTinyUpstream();
t.teardown(() => upstream.close());
const asked: TopUpRequest[] = [];
// Longer than a close reason, with multi-byte characters about the cut.
const HINT = `buy credits at the shop ${'é'.repeat(60)}`;
const shop: TollgatePlugin = {
  name: 'shop',
  register(container) {
    container.register(TopUpsToken, {
      useValue: {
        offer: (request) => {
          asked.push(request);
          return request.plan.name === 'sold' ? { headers: { link: '<https://shop.example/buy>; rel="payment"' }, data: { shop: 'https://shop.example/buy' }, closeHint: HINT } : undefined;
        },
      },
    });
  },
};
const gw = await startTestGateway({
  plans: { sold: { dailyCredits: 0, creditsPerSecond: 1e6, failover: false }, plain: { dailyCredits: 0, creditsPerSecond: 1e6, failover: false } },
  keys: [{ key: 'top-ups-sold-key-0001', id: 'sold', plan: 'sold' }, { key: 'top-ups-plain-key-001', id: 'plain', plan: 'plain' }],
  networks: [{ name: 'eth', families: ['evm'], upstreams: [{ url: upstream.url }] }],
}, [shop, httpTransport(), wsTransport(), evmFamily()]);
t.teardown(() => gw.close());

t.test('the refusal for credits carries the offer\'s headers and data; a key without an offer gets the refusal as before', async (t) => {
  const answer = await post(gw.url('eth', 'top-ups-sold-key-0001'), rpc('eth_blockNumber', []));
  t.equal(answer.status, 402);
  t.equal(answer.headers.link, '<https://shop.example/buy>; rel="payment"');
  t.match(answer.json, { error: { code: Errors.CREDITS_EXHAUSTED.code, data: { shop: 'https://shop.example/buy', dailyCredits: 0, cost: 80, resetsAt: String } } });
  t.match(asked.at(-1), { key: { id: 'sold' }, plan: { name: 'sold' }, network: 'eth', transport: 'http', headers: { host: String } });

  const plain = await post(gw.url('eth', 'top-ups-plain-key-001'), rpc('eth_blockNumber', []));
  t.equal(plain.status, 402);
  t.equal(plain.headers.link, undefined);
  const data = (plain.json as { error: { data: Record<string, unknown> } }).error.data;
  t.match(data, { dailyCredits: 0, cost: 80, resetsAt: String });
  t.notOk('shop' in data, 'no offer in error.data');
  t.equal(upstream.answered(), 0, 'nothing reached the node');
});

async function closeOf(key: string): Promise<{ code: number; reason: string }> {
  const socket = new WebSocket(`${gw.origin.replace('http', 'ws')}/eth/ws/v3/${key}`);
  t.teardown(() => socket.terminate());
  const closed = new Promise<{ code: number; reason: string }>((resolve) => socket.on('close', (code, reason) => resolve({ code, reason: reason.toString() })));
  await new Promise<void>((resolve, reject) => { socket.once('open', resolve); socket.once('error', reject); });
  socket.send(JSON.stringify(rpc('eth_blockNumber', [])));
  return closed;
}

t.test('a WebSocket closed with 4402 gets the hint, cut to the 123 bytes of a close reason on a character boundary', async (t) => {
  const { code, reason } = await closeOf('top-ups-sold-key-0001');
  t.equal(code, 4402);
  t.ok(reason.startsWith(`daily credit limit reached; buy credits at the shop é`), reason);
  t.ok(Buffer.byteLength(reason) <= 123 && Buffer.byteLength(reason) >= 122, `${Buffer.byteLength(reason)} bytes`);
  t.notOk(reason.includes('\uFFFD'), 'no broken character');
  t.match(asked.at(-1), { key: { id: 'sold' }, transport: 'ws', network: 'eth' });
  t.same(await closeOf('top-ups-plain-key-001'), { code: 4402, reason: 'daily credit limit reached' });
});

// `take`: a top-up the request carries (here a voucher header, not a payment protocol), taken by `meter`
// right before it charges. A guard stage anchored before `meter` is listed AFTER the voucher plugin, so
// a stage the voucher plugin had placed before `meter` would run before the guard: `take` must not.
t.test('meter takes the request\'s top-up right before it charges: after every other stage, whatever the plugins\' order, its credits there for the charge', async (t) => {
  const node = await startTinyUpstream();
  t.teardown(() => node.close());
  const taken: string[] = [];
  let ledger: CreditLedger | undefined;
  const vouchers: TollgatePlugin = {
    name: 'vouchers',
    register(container) {
      container.register(TopUpsToken, {
        useValue: {
          offer: () => undefined,
          take: (request) => {
            const voucher = request.headers?.['x-voucher'];
            if (typeof voucher !== 'string') return undefined;
            taken.push(voucher);
            if (voucher === 'forged') return Promise.resolve({ ok: false, error: new GatewayError(Errors.PAYMENT_REFUSED, { data: { code: 'FORGED' } }) });
            ledger ??= container.resolve(Tokens.CreditLedger);
            return Promise.resolve(ledger.topUp(request.key.id, 160, voucher)).then(() => ({ ok: true as const, headers: { 'x-voucher-applied': voucher } }));
          },
        },
      });
    },
  };
  const guard: TollgatePlugin = {
    name: 'guard',
    register(container) {
      container.register(Tokens.Stage, {
        useValue: { name: 'guard', before: 'meter', create: () => step((ctx) => { if (ctx.call.method === 'eth_chainId') throw new GatewayError(Errors.FORBIDDEN); }) },
      });
    },
  };
  const gw = await startTestGateway({
    plans: { bought: { dailyCredits: 0, creditsPerSecond: 1e6, failover: false } },
    keys: [{ key: 'top-ups-voucher-key-01', id: 'voucher', plan: 'bought' }],
    networks: [{ name: 'eth', families: ['evm'], upstreams: [{ url: node.url }] }],
  }, [vouchers, guard, httpTransport(), evmFamily()]);
  t.teardown(() => gw.close());
  const url = gw.url('eth', 'top-ups-voucher-key-01');
  const send = (body: unknown, voucher: string) => post(url, body, { 'content-type': 'application/json', 'x-voucher': voucher });

  const refusedByGuard = await send(rpc('eth_chainId', []), 'v1');
  t.equal(refusedByGuard.status, 403);
  t.same(taken, [], 'a call the guard refused took no top-up, though the guard is listed after the plugin');

  const batch = await send([rpc('eth_blockNumber', [], 1), rpc('eth_blockNumber', [], 2)], 'v2');
  t.equal(batch.status, 200);
  t.equal(batch.headers['x-voucher-applied'], 'v2');
  t.same(taken, ['v2', 'v2'], 'each call of the batch asked (the voucher is applied once: its id)');
  t.match(await ledger!.balance('voucher', 0, new Date()), { used: 0, paidRemaining: 0 }, 'the 160 credits paid for the two calls of 80');

  const forged = await send(rpc('eth_blockNumber', []), 'forged');
  t.equal(forged.status, 402);
  t.match(forged.json, { error: { code: Errors.PAYMENT_REFUSED.code, data: { code: 'FORGED' } } });
  t.equal(node.answered(), 2, 'the node answered the batch only');
});
