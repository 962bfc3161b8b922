import t from 'tap';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { firstValueFrom, type Observable } from 'rxjs';
import { createGateway, Errors, type Gateway, type TollgatePlugin } from '../core/index.js';
import { Tokens, type RequestContext } from '../core/plugin-api.js';
import { evmFamily } from '../plugins/evm/index.js';
import { startTinyUpstream } from './helpers/tiny-upstream.js';

// Every TypeScript example of the Stages section of docs/writing-plugins.md, run as written: each block
// becomes a module importing 'tollgate', and its plugin runs in a real gateway against a real node.
const page = readFileSync(new URL('../docs/writing-plugins.md', import.meta.url), 'utf8');
const section = page.slice(page.indexOf('\n## Stages'), page.indexOf('\n## Transports'));
const blocks = [...section.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]!);
const dir = t.testdir();
async function load<T>(source: string, index: number): Promise<T> {
  const file = join(dir, `stage-example-${index}.ts`);
  writeFileSync(file, source);
  return (await import(pathToFileURL(file).href)) as T;
}
const blockWith = (text: string): [string, number] => {
  const index = blocks.findIndex((b) => b.includes(text));
  if (index === -1) throw new Error(`no example with ${text}`);
  return [blocks[index]!, index];
};

const upstream = await startTinyUpstream();
t.teardown(() => upstream.close());
const KEY = 'docs-stages-key-0001';
const LIMITED = 'docs-stages-key-0002';
const other: TollgatePlugin = { name: 'other', register: (c) => c.register(Tokens.Family, { useValue: { name: 'other', methods: [{ name: 'other_ping', credits: 1, params: { type: 'array' } }] } }) };
async function gatewayWith(plugins: TollgatePlugin[]): Promise<Gateway> {
  const gateway = await createGateway({
    config: {
      log: { level: 'silent' },
      keys: [{ key: KEY, id: 'docs', plan: 'growth' }, { key: LIMITED, id: 'limited', plan: 'growth', settings: { methods: ['eth_chainId'] } }],
      networks: [
        { name: 'eth', families: ['evm'], upstreams: [{ url: upstream.url }] },
        { name: 'other', families: ['other'], upstreams: [{ url: upstream.url }] },
      ],
    },
    plugins: [evmFamily(), other, ...plugins],
  });
  t.teardown(() => gateway.close());
  return gateway;
}
const call = async (gateway: Gateway, method: string, key = KEY, network = 'eth') => {
  const output = await firstValueFrom(gateway.handle({ network, apiKey: key, body: { jsonrpc: '2.0', id: 1, method, params: [] } }));
  return { status: output.status, body: JSON.parse(String(output.body)) as { result?: unknown; error?: { code: number; message: string } }, ctx: output.contexts[0] as RequestContext };
};

t.test('the section has the examples this test runs', async (t) => {
  t.equal(blocks.length, 6);
});

t.test('allowlist: a step before meter refuses a method the key may not call, free of charge', async (t) => {
  const [source, index] = blockWith('export function allowlist()');
  const example = await load<{ allowlist: () => TollgatePlugin; ALLOWED_METHODS: unknown }>(source, index);
  const gateway = await gatewayWith([example.allowlist()]);
  t.same((await call(gateway, 'eth_chainId', LIMITED)).body, { jsonrpc: '2.0', id: 1, result: '0x1' });
  const refused = await call(gateway, 'eth_blockNumber', LIMITED);
  t.equal(refused.status, Errors.FORBIDDEN.httpStatus);
  t.match(refused.body.error, { code: Errors.FORBIDDEN.code, message: 'method eth_blockNumber is not allowed for this key' });
  t.same(refused.ctx.state.get(example.ALLOWED_METHODS as never), ['eth_chainId']);
  t.equal((await gateway.container.resolve(Tokens.CreditLedger).balance('limited', 1e9, new Date())).used, 5, 'only the allowed call was charged');
});

t.test('orderStages: the order the example shows in its comment', async (t) => {
  const [source, index] = blockWith('orderStages([');
  const comment = /\/\/ (\[.*\])\s*$/.exec(source.trim())![1]!;
  const example = await load<{ result: string[] }>(source.replace(/^orderStages\(/m, 'export const result = orderStages('), index);
  t.same(example.result, JSON.parse(comment.replaceAll("'", '"')));
});

t.test('dispatchTiming: a plain tap operator as a stage after dispatch', async (t) => {
  const [source, index] = blockWith('dispatchTiming');
  const example = await load<{ dispatchTiming: TollgatePlugin }>(source, index);
  const gateway = await gatewayWith([example.dispatchTiming]);
  t.same((await call(gateway, 'eth_chainId')).body, { jsonrpc: '2.0', id: 1, result: '0x1' });
});

t.test('riskScore: timeout + retry inside an operator stage, scoped to the evm family', async (t) => {
  const [source, index] = blockWith('export function riskScore');
  const example = await load<{ riskScore: (service: (keyId: string) => Promise<number>) => TollgatePlugin; RISK: unknown }>(source, index);
  const asked: string[] = [];
  // The first answer never comes; the retry gets one.
  const service = (keyId: string): Promise<number> => (asked.push(keyId) === 1 ? new Promise<number>(() => {}) : Promise.resolve(7));
  const gateway = await gatewayWith([example.riskScore(service)]);
  const answered = await call(gateway, 'eth_chainId');
  t.same(answered.body, { jsonrpc: '2.0', id: 1, result: '0x1' });
  t.equal(answered.ctx.state.get(example.RISK as never), 7);
  t.same(asked, ['docs', 'docs'], 'timed out once, asked again');
  t.same((await call(gateway, 'other_ping', KEY, 'other')).body, { jsonrpc: '2.0', id: 1, result: '0x1' });
  t.equal(asked.length, 2, 'a call on a network without the evm family never runs the stage');
});

t.test('monthlyCap: a step after meter that refuses past its allowance; the debit is refunded', async (t) => {
  const [source, index] = blockWith('export function monthlyCap');
  const example = await load<{ monthlyCap: (credits: number) => TollgatePlugin }>(source, index);
  const gateway = await gatewayWith([example.monthlyCap(8)]);
  const ledger = gateway.container.resolve(Tokens.CreditLedger);
  t.same((await call(gateway, 'eth_chainId')).body, { jsonrpc: '2.0', id: 1, result: '0x1' });
  const refused = await call(gateway, 'eth_chainId');
  t.equal(refused.status, Errors.CREDITS_EXHAUSTED.httpStatus);
  t.match(refused.body.error, { code: Errors.CREDITS_EXHAUSTED.code, message: 'monthly credit limit reached', data: { creditsPerMonth: 8 } });
  t.equal((await ledger.balance('docs', 1e9, new Date())).used, 5, 'the refused call was refunded');
});

t.test('runComposed: the stages composed with plain RxJS answer and charge as the gateway does', async (t) => {
  const [source, index] = blockWith('export function runComposed');
  const example = await load<{ runComposed: (gateway: Gateway, ctx: RequestContext) => Observable<RequestContext> }>(source, index);
  const gateway = await gatewayWith([]);
  const network = gateway.networks.get('eth')!;
  const ctx = gateway.createContext({ transport: 'direct', network, credentials: { apiKey: KEY }, call: { method: 'eth_chainId', params: [], id: 1 } });
  const out = await firstValueFrom(example.runComposed(gateway, ctx));
  t.equal(out, ctx);
  t.equal(out.error, undefined);
  t.same(JSON.parse(Buffer.from(out.reply!.body as Uint8Array).toString('utf8')), { jsonrpc: '2.0', id: 1, result: '0x1' });
  t.equal((await gateway.container.resolve(Tokens.CreditLedger).balance('docs', 1e9, new Date())).used, 5, 'charged as through the gateway');
  const refused = gateway.createContext({ transport: 'direct', network, credentials: { apiKey: 'no-such-key-000000001' }, call: { method: 'eth_chainId', params: [], id: 1 } });
  t.equal((await firstValueFrom(example.runComposed(gateway, refused))).error?.entry, Errors.UNAUTHORIZED, 'a refusal is the context\'s error, never an observable error');
});
