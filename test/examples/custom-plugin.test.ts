import t, { type Test } from 'tap';
import { createPublicClient, http, webSocket, type Hex, type PublicClient } from 'viem';
import { startExample, type ExampleProcess } from '../helpers/example-process.js';
import { post, rpc, type RawAnswer } from '../helpers/json-rpc.js';
import { openWs } from '../helpers/ws-client.js';
import { EVM_METHODS } from '../../plugins/evm/methods.js';
import { SEED_CONTRACT } from '@tollgate/devnet';

// examples/custom-plugin as `npm start` runs it, driven by real clients: curl-level HTTP, viem over
// HTTP and WebSocket, and a raw WebSocket whose upgrade request carries Origin and User-Agent.

const ADMIN_TOKEN = 'custom-plugin-admin-token-0123456789';
const OPEN_KEY = 'tollgate-demo-key-0001';
const DAPP_KEY = 'tollgate-dapp-key-0002';
const CONTRACT = '0x5FbDB2315678afecb367f032d93F642f64180aa3';
const SECOND = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';
const FIRST = '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266';
/** Headers that pass the `dapp` key's Origin and User-Agent lists. */
const GOOD = { origin: 'https://app.example.com', 'user-agent': 'MyDapp/2.1 (iOS)' } as const;
const PINGS = SEED_CONTRACT.selectors.pings as Hex;

let example: ExampleProcess | undefined = await startExample('custom-plugin', { TOLLGATE_ADMIN_TOKEN: ADMIN_TOKEN });
t.teardown(async () => {
  if (example !== undefined) await example.stop();
});
const origin = example.origin;
const url = (key: string): string => `${origin}/eth-devnet/v3/${key}`;
const wsUrl = (key: string): string => `${origin.replace('http:', 'ws:')}/eth-devnet/ws/v3/${key}`;

function credits(method: string): number {
  const found = EVM_METHODS.find((m) => m.name === method);
  if (found === undefined) throw new Error(`no evm method ${method}`);
  return found.credits;
}

function call(key: string, method: string, params: unknown[], headers: Record<string, string> = GOOD): Promise<RawAnswer> {
  return post(url(key), rpc(method, params), { 'content-type': 'application/json', ...headers });
}

/** Credits the key used today, read through the admin API. */
async function used(id: string): Promise<number> {
  const res = await post(`${origin}/admin/v1/keys/${id}`, '', { authorization: `Bearer ${ADMIN_TOKEN}` }, 'GET');
  if (res.status !== 200) throw new Error(`admin API: ${res.status} ${res.text}`);
  return (res.json as { balance: { used: number } }).balance.used;
}

const LIST_FIX = (list: string, what: string): string => `add ${what} to the key's "${list}" allowlist in its security settings, or remove that list`;

/** The error the security plugin answers for `reason`: its setting and fix, written out here. */
function forbiddenError(reason: string): { code: number; message: string; data: { setting: string; fix: string } } {
  const [setting, fix] = reason.startsWith('method')
    ? ['methods', LIST_FIX('methods', 'the method')]
    : reason === 'origin not allowed: the request has no Origin header'
      ? ['origins', `call from a page whose origin is allowed (browsers send Origin), or ${LIST_FIX('origins', 'the origin')}`]
      : reason.startsWith('origin')
        ? ['origins', LIST_FIX('origins', 'the origin (https://*.example.com allows every subdomain)')]
        : reason.startsWith('user agent')
          ? ['userAgents', LIST_FIX('userAgents', 'a part of the User-Agent (case-sensitive)')]
          : reason.includes(' needs ')
            ? ['addresses', 'name an allowed contract address in the call']
            : ['addresses', LIST_FIX('addresses', 'the address')];
  return { code: -33100, message: `${reason}; fix: ${fix}`, data: { setting, fix } };
}

function forbidden(t: Test, res: RawAnswer, reason: string, what = reason): void {
  t.equal(res.status, 403, `${what}: HTTP 403`);
  t.same(res.json, { jsonrpc: '2.0', id: 1, error: forbiddenError(reason) }, `${what}: the FORBIDDEN error, naming the setting and the fix`);
}

function served(t: Test, res: RawAnswer, what: string): void {
  t.equal(res.status, 200, `${what}: HTTP 200`);
  t.ok(res.json !== undefined && 'result' in (res.json as object), `${what}: a result (${res.text.slice(0, 120)})`);
}

t.test('the open key has no allowlist entry: any method, any address, from anywhere', async (t) => {
  const noHeaders = {};
  served(t, await call(OPEN_KEY, 'eth_gasPrice', [], noHeaders), 'eth_gasPrice without Origin or User-Agent');
  served(t, await call(OPEN_KEY, 'eth_getBalance', [FIRST, 'latest'], { origin: 'https://evil.test', 'user-agent': 'bot' }), 'eth_getBalance of any address from any origin');
  const logs = await call(OPEN_KEY, 'eth_getLogs', [{ fromBlock: 'earliest', toBlock: 'latest' }], noHeaders);
  served(t, logs, 'eth_getLogs without an address');
  t.equal((logs.json as { result: unknown[] }).result.length, 5, 'every seeded log');
});

t.test('methods: only the listed ones, any of them', async (t) => {
  for (const method of ['eth_blockNumber', 'eth_chainId', 'txpool_status']) served(t, await call(DAPP_KEY, method, []), method);
  forbidden(t, await call(DAPP_KEY, 'eth_gasPrice', []), 'method not allowed: eth_gasPrice');
  forbidden(t, await call(DAPP_KEY, 'txpool_inspect', []), 'method not allowed: txpool_inspect');
  const unknown = await call(DAPP_KEY, 'eth_nope', []);
  t.equal((unknown.json as { error: { code: number } }).error.code, -32601, 'a method the network lacks is still "method not found"');
});

t.test('origins: wildcard subdomains, optional scheme, ports, and nothing else', async (t) => {
  const cases: Array<[string, boolean, string]> = [
    ['https://app.example.com', true, 'a subdomain of *.example.com over https'],
    ['https://a.b.example.com', true, 'a deeper subdomain'],
    ['HTTPS://App.Example.COM', true, 'case does not matter'],
    ['http://app.example.com', false, 'https://*.example.com requires https'],
    ['https://example.com', false, '*.example.com does not match example.com itself'],
    ['https://app.example.com:8443', false, 'another port'],
    ['https://evilexample.com', false, 'a name that merely ends the same'],
    ['https://app.example.com.evil.test', false, 'a name that merely starts the same'],
    ['http://shop.example.org', true, '*.example.org, scheme optional: http'],
    ['https://shop.example.org', true, '*.example.org, scheme optional: https'],
    ['https://example.org', false, '*.example.org does not match example.org itself'],
    ['http://localhost:3000', true, 'an exact origin with a port'],
    ['http://localhost:3001', false, 'the same host on another port'],
    ['https://localhost:3000', false, 'the same host and port with another scheme'],
    ['null', false, 'the opaque origin of a sandboxed frame'],
  ];
  for (const [value, allowed, what] of cases) {
    const res = await call(DAPP_KEY, 'eth_blockNumber', [], { ...GOOD, origin: value });
    if (allowed) served(t, res, `${value}: ${what}`);
    else forbidden(t, res, `origin not allowed: ${value}`, `${value}: ${what}`);
  }
  forbidden(t, await call(DAPP_KEY, 'eth_blockNumber', [], { 'user-agent': GOOD['user-agent'] }), 'origin not allowed: the request has no Origin header');
});

t.test('user agents: a listed substring, case-sensitive, any of them', async (t) => {
  for (const ua of ['MyDapp/2.1 (iOS)', 'Mozilla/5.0 (X11) MyDapp/3.0', 'curl/8.5.0']) served(t, await call(DAPP_KEY, 'eth_blockNumber', [], { ...GOOD, 'user-agent': ua }), ua);
  for (const ua of ['mydapp/2.1', 'node', 'MyDapp 2.1']) {
    forbidden(t, await call(DAPP_KEY, 'eth_blockNumber', [], { ...GOOD, 'user-agent': ua }), `user agent not allowed: ${ua}`);
  }
  const long = `Bot/1.0 ${'x'.repeat(300)}`;
  const res = await call(DAPP_KEY, 'eth_blockNumber', [], { ...GOOD, 'user-agent': long });
  forbidden(t, res, `user agent not allowed: ${long.slice(0, 100)}...`, 'a long User-Agent is cut in the message');
});

t.test('contract addresses: each of the seven address-taking methods', async (t) => {
  const notAllowed = `contract address not allowed: ${FIRST}`;
  // eth_call and eth_estimateGas: the call object's `to`.
  const pings = await call(DAPP_KEY, 'eth_call', [{ to: CONTRACT, data: PINGS }, 'latest']);
  served(t, pings, 'eth_call to the contract');
  t.equal(BigInt((pings.json as { result: Hex }).result), 5n, 'the contract answered (5 pings)');
  served(t, await call(DAPP_KEY, 'eth_call', [{ to: CONTRACT.toLowerCase(), data: PINGS }, 'latest']), 'eth_call, lower-case address');
  forbidden(t, await call(DAPP_KEY, 'eth_call', [{ to: FIRST, data: '0x' }, 'latest']), notAllowed, 'eth_call to another address');
  forbidden(t, await call(DAPP_KEY, 'eth_call', [{ data: PINGS }, 'latest']), 'contract address not allowed: eth_call needs a "to" address');
  forbidden(t, await call(DAPP_KEY, 'eth_call', [{ to: null, data: PINGS }, 'latest']), 'contract address not allowed: eth_call needs a "to" address', 'eth_call with to: null');
  served(t, await call(DAPP_KEY, 'eth_estimateGas', [{ from: FIRST, to: SECOND, value: '0x1' }]), 'eth_estimateGas to an allowed address (from is not checked)');
  forbidden(t, await call(DAPP_KEY, 'eth_estimateGas', [{ from: SECOND, to: FIRST, value: '0x1' }]), notAllowed, 'eth_estimateGas to another address');
  forbidden(t, await call(DAPP_KEY, 'eth_estimateGas', [{ from: FIRST, data: '0x00' }]), 'contract address not allowed: eth_estimateGas needs a "to" address');

  // eth_getLogs: the filter's address, a string or an array whose every entry must be allowed.
  const range = { fromBlock: 'earliest', toBlock: 'latest' };
  const logs = await call(DAPP_KEY, 'eth_getLogs', [{ ...range, address: CONTRACT }]);
  served(t, logs, 'eth_getLogs of the contract');
  t.equal((logs.json as { result: unknown[] }).result.length, 5);
  served(t, await call(DAPP_KEY, 'eth_getLogs', [{ ...range, address: CONTRACT.toUpperCase().replace('0X', '0x') }]), 'eth_getLogs, upper-case hex');
  served(t, await call(DAPP_KEY, 'eth_getLogs', [{ ...range, address: [CONTRACT, SECOND] }]), 'eth_getLogs, an array of allowed addresses');
  forbidden(t, await call(DAPP_KEY, 'eth_getLogs', [{ ...range, address: [CONTRACT, FIRST] }]), notAllowed, 'eth_getLogs, an array with one address not allowed');
  forbidden(t, await call(DAPP_KEY, 'eth_getLogs', [range]), 'contract address not allowed: eth_getLogs needs an address (or addresses) in its filter', 'eth_getLogs without address');
  forbidden(t, await call(DAPP_KEY, 'eth_getLogs', [{ ...range, address: [] }]), 'contract address not allowed: eth_getLogs needs an address (or addresses) in its filter', 'eth_getLogs with an empty address array');

  // eth_getBalance, eth_getCode, eth_getStorageAt, eth_getTransactionCount: param 0.
  const positional: Array<[string, (address: string) => unknown[]]> = [
    ['eth_getBalance', (a) => [a, 'latest']],
    ['eth_getCode', (a) => [a, 'latest']],
    ['eth_getStorageAt', (a) => [a, '0x0', 'latest']],
    ['eth_getTransactionCount', (a) => [a, 'latest']],
  ];
  for (const [method, params] of positional) {
    served(t, await call(DAPP_KEY, method, params(CONTRACT)), `${method} of the contract`);
    served(t, await call(DAPP_KEY, method, params(SECOND.toLowerCase())), `${method} of the other allowed address`);
    forbidden(t, await call(DAPP_KEY, method, params(FIRST)), notAllowed, `${method} of another address`);
  }
  served(t, await call(DAPP_KEY, 'web3_sha3', ['0x00']), 'a method that takes no address is not affected');
});

t.test('every list must pass: the first that fails is named', async (t) => {
  const ok = [SECOND, 'latest'];
  served(t, await call(DAPP_KEY, 'eth_getBalance', ok), 'all four lists pass');
  forbidden(t, await call(DAPP_KEY, 'eth_getBalance', ok, { ...GOOD, origin: 'https://evil.test' }), 'origin not allowed: https://evil.test');
  forbidden(t, await call(DAPP_KEY, 'eth_getBalance', ok, { ...GOOD, 'user-agent': 'curl' }), 'user agent not allowed: curl');
  forbidden(t, await call(DAPP_KEY, 'eth_getBalance', [FIRST, 'latest']), `contract address not allowed: ${FIRST}`);
  forbidden(t, await call(DAPP_KEY, 'eth_gasPrice', [], { origin: 'https://evil.test', 'user-agent': 'curl' }), 'method not allowed: eth_gasPrice', 'methods are checked first');
  const invalid = await call(DAPP_KEY, 'eth_getBalance', ['0x12', 'latest'], {});
  t.equal((invalid.json as { error: { code: number } }).error.code, -32602, 'params are validated before the allowlist');
});

t.test('in a batch only the refused entries fail', async (t) => {
  const batch = [
    rpc('eth_blockNumber', [], 1),
    rpc('eth_gasPrice', [], 2),
    rpc('eth_getBalance', [FIRST, 'latest'], 3),
    rpc('eth_getBalance', [SECOND, 'latest'], 4),
  ];
  const res = await post(url(DAPP_KEY), batch, { 'content-type': 'application/json', ...GOOD });
  t.equal(res.status, 200);
  const answers = res.json as Array<{ id: number; result?: unknown; error?: unknown }>;
  t.same(answers.map((a) => a.id), [1, 2, 3, 4], 'answered in request order');
  t.ok('result' in answers[0]! && 'result' in answers[3]!, 'the allowed entries are served');
  t.same(answers[1]!.error, forbiddenError('method not allowed: eth_gasPrice'));
  t.same(answers[2]!.error, forbiddenError(`contract address not allowed: ${FIRST}`));

  const allRefused = await post(url(DAPP_KEY), [rpc('eth_gasPrice', [], 1), rpc('eth_blockNumber', [], 2)], { 'content-type': 'application/json', ...GOOD, origin: 'https://evil.test' });
  t.equal(allRefused.status, 403, 'a batch whose every entry is refused takes the 403');
  t.same(allRefused.json, [
    { jsonrpc: '2.0', id: 1, error: forbiddenError('method not allowed: eth_gasPrice') },
    { jsonrpc: '2.0', id: 2, error: forbiddenError('origin not allowed: https://evil.test') },
  ]);
});

t.test('refused calls cost no credits; allowed ones cost their price', async (t) => {
  const before = await used('dapp');
  forbidden(t, await call(DAPP_KEY, 'eth_getBalance', [FIRST, 'latest']), `contract address not allowed: ${FIRST}`);
  forbidden(t, await call(DAPP_KEY, 'eth_getLogs', [{ fromBlock: 'earliest', toBlock: 'latest' }]), 'contract address not allowed: eth_getLogs needs an address (or addresses) in its filter');
  forbidden(t, await call(DAPP_KEY, 'eth_gasPrice', []), 'method not allowed: eth_gasPrice');
  forbidden(t, await call(DAPP_KEY, 'eth_call', [{ to: CONTRACT, data: PINGS }, 'latest'], {}), 'origin not allowed: the request has no Origin header');
  await post(url(DAPP_KEY), [rpc('eth_gasPrice', [], 1), rpc('eth_getCode', [FIRST, 'latest'], 2)], { 'content-type': 'application/json', ...GOOD });
  const ws = await openWs(wsUrl(DAPP_KEY), { origin: GOOD.origin, headers: { 'user-agent': GOOD['user-agent'] } });
  ws.send(rpc('eth_getTransactionCount', [FIRST, 'latest'], 1));
  await ws.waitFor(1);
  ws.close();
  t.same((ws.messages[0] as { error: unknown }).error, forbiddenError(`contract address not allowed: ${FIRST}`), 'refused over WebSocket too');
  t.equal(await used('dapp'), before, 'six refusals (HTTP, batch, WebSocket) charged nothing');

  served(t, await call(DAPP_KEY, 'eth_getBalance', [SECOND, 'latest']), 'an allowed call');
  t.equal(await used('dapp'), before + credits('eth_getBalance'), 'the allowed call is charged');
  const mixed = await post(url(DAPP_KEY), [rpc('eth_call', [{ to: CONTRACT, data: PINGS }, 'latest'], 1), rpc('eth_getCode', [FIRST, 'latest'], 2)], { 'content-type': 'application/json', ...GOOD });
  t.equal(mixed.status, 200);
  t.equal(await used('dapp'), before + credits('eth_getBalance') + credits('eth_call'), 'in a batch, only the allowed entry is charged');
});

t.test('the geth-extras family: answered by Anvil, at its own credit costs', async (t) => {
  const cases: Array<[string, unknown[], unknown, number]> = [
    ['txpool_status', [], { pending: '0x0', queued: '0x0' }, 20],
    ['txpool_inspect', [], { pending: {}, queued: {} }, 120],
    ['txpool_content', [], { pending: {}, queued: {} }, 250],
    ['web3_sha3', ['0x68656c6c6f20776f726c64'], '0x47173285a8d7341e5e972fc677286384f802f8ef42a5ec5f03bbfa254cb01fad', 10],
  ];
  for (const [method, params, result, cost] of cases) {
    const before = await used('demo');
    const res = await call(OPEN_KEY, method, params, {});
    t.equal(res.status, 200, method);
    t.same(res.json, { jsonrpc: '2.0', id: 1, result }, `${method}: the node's answer`);
    t.equal(res.headers['x-tollgate-upstream'], 'eth-devnet-primary-1', `${method}: served by the Anvil upstream`);
    t.equal(await used('demo'), before + cost, `${method}: ${cost} credits`);
  }
  const noParams = await post(url(OPEN_KEY), { jsonrpc: '2.0', id: 1, method: 'txpool_status' });
  t.same((noParams.json as { result: unknown }).result, { pending: '0x0', queued: '0x0' }, 'params may be left out');
});

t.test('the family validates its params (-32602, not charged)', async (t) => {
  const before = await used('demo');
  const cases: Array<[string, unknown[], string]> = [
    ['txpool_status', [1], 'too many arguments, want at most 0'],
    ['txpool_content', ['pending'], 'too many arguments, want at most 0'],
    ['web3_sha3', ['hello'], 'invalid argument 0 (data): must be hex data (0x followed by an even number of hex digits)'],
    ['web3_sha3', ['0xabc'], 'invalid argument 0 (data): must be hex data (0x followed by an even number of hex digits)'],
  ];
  for (const [method, params, message] of cases) {
    const res = await call(OPEN_KEY, method, params, {});
    t.equal(res.status, 200);
    t.same(res.json, { jsonrpc: '2.0', id: 1, error: { code: -32602, message } }, `${method}(${JSON.stringify(params)})`);
  }
  const missing = await call(OPEN_KEY, 'web3_sha3', [], {});
  t.equal((missing.json as { error: { code: number } }).error.code, -32602, 'web3_sha3 without its argument');
  t.equal(await used('demo'), before, 'invalid calls cost nothing');
});

t.test('viem over HTTP: allowed calls pass, refused ones surface -33100', async (t) => {
  const client: PublicClient = createPublicClient({ transport: http(url(DAPP_KEY), { retryCount: 0, fetchOptions: { headers: GOOD } }) });
  t.equal(typeof (await client.getBalance({ address: SECOND })), 'bigint', 'getBalance of an allowed address');
  const { data } = await client.call({ to: CONTRACT, data: PINGS });
  t.equal(BigInt(data!), 5n, 'call to the allowed contract');
  t.equal(await client.getBytecode({ address: CONTRACT }).then((code) => code !== undefined && code.length > 2), true, 'getCode of the contract');
  const refused = await client.getBalance({ address: FIRST }).then(() => undefined, (error: Error) => error);
  t.ok(refused !== undefined, 'getBalance of another address is refused');
  t.match(refused, { status: 403 });
  t.match(JSON.stringify(refused), /-33100/);
  t.match(refused!.message, new RegExp(`contract address not allowed: ${FIRST}`));
  const noOrigin = createPublicClient({ transport: http(url(DAPP_KEY), { retryCount: 0 }) });
  await t.rejects(noOrigin.getBlockNumber(), /origin not allowed: the request has no Origin header/, 'without an Origin header, refused');
});

t.test('viem over WebSocket: the allowlist applies to every message', async (t) => {
  const open = createPublicClient({ transport: webSocket(wsUrl(OPEN_KEY), { retryCount: 0, reconnect: false, keepAlive: false }) });
  t.equal(typeof (await open.getBalance({ address: FIRST })), 'bigint', 'the open key: any address');
  // viem's WebSocket sends no Origin header, which the dapp key requires.
  const dapp = createPublicClient({ transport: webSocket(wsUrl(DAPP_KEY), { retryCount: 0, reconnect: false, keepAlive: false }) });
  const refused = await dapp.getBlockNumber({ cacheTime: 0 }).then(() => undefined, (error: Error) => error);
  t.ok(refused !== undefined, 'refused');
  t.match(refused, { code: -33100 });
  t.match(refused!.message, /origin not allowed: the request has no Origin header/);
  for (const client of [open, dapp]) await (await client.transport.getRpcClient()).close();
});

t.test('WebSocket: Origin and User-Agent come from the upgrade request', async (t) => {
  const ws = await openWs(wsUrl(DAPP_KEY), { origin: 'https://wallet.example.com', headers: { 'user-agent': 'MyDapp/4.0 (Android)' } });
  t.teardown(() => ws.close());
  ws.send(rpc('eth_getBalance', [SECOND, 'latest'], 1));
  ws.send(rpc('eth_getBalance', [FIRST, 'latest'], 2));
  ws.send([rpc('eth_gasPrice', [], 3), rpc('eth_call', [{ to: CONTRACT, data: PINGS }, 'latest'], 4)]);
  ws.send(rpc('eth_blockNumber', [], 5));
  const messages = (await ws.waitFor(4)) as Array<{ id?: number; result?: unknown; error?: unknown } | Array<{ id: number; result?: unknown; error?: unknown }>>;
  const byId = new Map<number, { result?: unknown; error?: unknown }>();
  for (const message of messages) for (const answer of Array.isArray(message) ? message : [message]) byId.set(answer.id!, answer);
  t.ok('result' in byId.get(1)!, 'an allowed call');
  t.same(byId.get(2)!.error, forbiddenError(`contract address not allowed: ${FIRST}`), 'a refused call');
  t.same(byId.get(3)!.error, forbiddenError('method not allowed: eth_gasPrice'), 'the refused entry of a batch');
  t.equal(BigInt(byId.get(4)!.result as Hex), 5n, 'the allowed entry of the same batch');
  t.ok('result' in byId.get(5)!, 'the connection stays open after a refusal');

  const otherOrigin = await openWs(wsUrl(DAPP_KEY), { origin: 'https://example.com', headers: { 'user-agent': 'MyDapp/4.0' } });
  otherOrigin.send(rpc('eth_blockNumber', [], 1));
  await otherOrigin.waitFor(1);
  otherOrigin.close();
  t.same((otherOrigin.messages[0] as { error: unknown }).error, forbiddenError('origin not allowed: https://example.com'));

  const otherAgent = await openWs(wsUrl(DAPP_KEY), { origin: 'https://app.example.com', headers: { 'user-agent': 'Python/3.12 websockets' } });
  otherAgent.send(rpc('eth_blockNumber', [], 1));
  await otherAgent.waitFor(1);
  otherAgent.close();
  t.same((otherAgent.messages[0] as { error: unknown }).error, forbiddenError('user agent not allowed: Python/3.12 websockets'));
});

t.test('SIGTERM closes the gateway and exits 0', async (t) => {
  const running = example!;
  example = undefined;
  t.equal(await running.stop(), 0);
  t.match(running.output(), /^Listening on http:\/\/127\.0\.0\.1:\d+$/m, 'printed its address');
});
