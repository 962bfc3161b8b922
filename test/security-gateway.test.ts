import t from 'tap';
import { ConfigError, type TollgatePlugin } from '../core/index.js';
import { MemoryCreditLedger, type DebitResult } from '../core/store-api.js';
import { Tokens, orderStages } from '../core/plugin-api.js';
import { httpTransport } from '../plugins/http/index.js';
import { evmFamily } from '../plugins/evm/index.js';
import { devnet } from '@tollgate/devnet';
import { gethExtrasFamily } from '../examples/custom-plugin/index.js';
import { security, type SecuritySettings } from '../plugins/security/index.js';
import { securityStage } from '../plugins/security/security-stage.js';
import { compileSecurity, keySecurityProblems } from '../plugins/security/settings.js';
import { parseOriginPattern, originMatches } from '../plugins/security/origin-pattern.js';
import { refusalOf } from '../plugins/security/allowlist-rules.js';
import { ManualClock, startTestGateway } from './helpers/gateway.js';
import { post, rpc, type RawAnswer } from './helpers/json-rpc.js';

// The security plugin's allowlists in a gateway assembled in the test: one key per list type, settings
// from code and config, and a ledger that records every debit, to show refused calls never reach metering.

const FIRST = '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266';
const SECOND = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';

/** A memory ledger that remembers which keys it was asked to debit. */
class RecordingLedger extends MemoryCreditLedger {
  readonly debits: string[] = [];
  override debit(keyId: string, credits: number, dailyLimit: number, now: Date): DebitResult {
    this.debits.push(keyId);
    return super.debit(keyId, credits, dailyLimit, now);
  }
}
const ledger = new RecordingLedger();
const recordingLedger: TollgatePlugin = {
  name: 'recording-ledger',
  register(container) {
    container.register(Tokens.CreditLedger, { useValue: ledger });
  },
};

const fromCode: SecuritySettings = {
  keys: {
    methods: { methods: ['eth_blockNumber', 'web3_sha3'] },
    replaced: { methods: ['eth_chainId'] },
  },
};
const fromConfig = {
  keys: {
    origins: { origins: ['wallet.example.net', 'https://*.example.com:8443'] },
    agents: { userAgents: ['ethers/', 'viem@'] },
    addresses: { addresses: [SECOND] },
    empty: { methods: [], origins: [], userAgents: [], addresses: [] },
    replaced: { methods: ['eth_blockNumber'] },
    tiny: { methods: ['eth_getBalance'] },
  },
};

const clock = new ManualClock(Date.UTC(2026, 5, 1, 12, 0, 0));
const ids = ['open', 'methods', 'origins', 'agents', 'addresses', 'empty', 'replaced', 'tiny'] as const;
const keyOf = (id: string): string => `security-test-key-${id}`;
const gw = await startTestGateway(
  {
    plans: { tiny: { dailyCredits: 100, creditsPerSecond: 80, failover: false } },
    keys: ids.map((id) => ({ key: keyOf(id), id, plan: id === 'tiny' ? 'tiny' : 'growth' })),
    networks: [{ name: 'eth', families: ['evm', 'geth-extras'], upstreams: [{ embedded: 'anvil' }] }],
    plugins: { security: fromConfig },
  },
  [httpTransport(), evmFamily(), gethExtrasFamily(), security(fromCode), devnet(), recordingLedger],
  { clock },
);
t.teardown(() => gw.close());

function call(id: string, method: string, params: unknown[], headers: Record<string, string> = {}): Promise<RawAnswer> {
  return post(gw.url('eth', keyOf(id)), rpc(method, params), { 'content-type': 'application/json', ...headers });
}
const code = (res: RawAnswer): number | undefined => (res.json as { error?: { code: number } }).error?.code;
/** The refusal's reason: its message up to the fix, which the example's test checks word for word. */
const message = (res: RawAnswer): string | undefined => (res.json as { error?: { message: string } }).error?.message.split('; fix: ')[0];
const setting = (res: RawAnswer): string | undefined => (res.json as { error?: { data?: { setting: string } } }).error?.data?.setting;

t.test('the stage sits right before meter', async (t) => {
  t.same(orderStages([securityStage(() => undefined)]), ['authenticate', 'validate', 'security', 'meter', 'enforceLimits', 'route', 'dispatch', 'checkResult']);
});

t.test('each list alone restricts only its own kind', async (t) => {
  // methods
  t.equal((await call('methods', 'eth_blockNumber', [])).status, 200);
  const refused = await call('methods', 'eth_chainId', []);
  t.equal(message(refused), 'method not allowed: eth_chainId');
  t.equal(setting(refused), 'methods', 'error.data names the setting');
  t.equal((await call('methods', 'eth_getBalance', [FIRST, 'latest'])).status, 403, 'eth_getBalance is not listed');
  // origins: scheme-optional host, and a wildcard with a port
  t.equal((await call('origins', 'eth_getBalance', [FIRST, 'latest'], { origin: 'http://wallet.example.net' })).status, 200, 'any method, any address');
  t.equal((await call('origins', 'eth_chainId', [], { origin: 'https://wallet.example.net' })).status, 200);
  t.equal((await call('origins', 'eth_chainId', [], { origin: 'https://pay.example.com:8443' })).status, 200);
  t.equal(message(await call('origins', 'eth_chainId', [], { origin: 'https://pay.example.com' })), 'origin not allowed: https://pay.example.com', 'the default port is not 8443');
  t.equal(message(await call('origins', 'eth_chainId', [], { origin: 'https://x.wallet.example.net' })), 'origin not allowed: https://x.wallet.example.net', 'an entry without * matches that host only');
  // user agents
  t.equal((await call('agents', 'eth_chainId', [], { 'user-agent': 'ethers/6.13 (node)' })).status, 200);
  t.equal((await call('agents', 'eth_chainId', [], { 'user-agent': 'viem@2.21' })).status, 200);
  t.equal(message(await call('agents', 'eth_chainId', [], { 'user-agent': 'web3.js/4' })), 'user agent not allowed: web3.js/4');
  // addresses: address-taking methods only
  t.equal((await call('addresses', 'eth_getBalance', [SECOND, 'latest'])).status, 200);
  t.equal(message(await call('addresses', 'eth_getBalance', [FIRST, 'latest'])), `contract address not allowed: ${FIRST}`);
  t.equal((await call('addresses', 'eth_getBlockByNumber', ['latest', false])).status, 200, 'a method without an address is not affected');
  t.equal((await call('addresses', 'txpool_status', [])).status, 200, 'nor is a method of another family');
});

t.test('an empty configuration allows everything', async (t) => {
  for (const id of ['open', 'empty']) {
    t.equal((await call(id, 'eth_getLogs', [{ fromBlock: 'earliest', toBlock: 'latest' }])).status, 200, `${id}: eth_getLogs without address`);
    t.equal((await call(id, 'txpool_content', [], { origin: 'https://evil.test', 'user-agent': 'bot' })).status, 200, `${id}: any origin and agent`);
  }
  t.equal(compileSecurity({}).hasLists, false, 'no settings: no list');
  t.equal(compileSecurity({ methods: [], addresses: [] }).hasLists, false, 'empty lists restrict nothing');
});

t.test("the config's entry for a key replaces the code's", async (t) => {
  t.equal((await call('replaced', 'eth_blockNumber', [])).status, 200, 'allowed by the config');
  t.equal(message(await call('replaced', 'eth_chainId', [])), 'method not allowed: eth_chainId', "the code's list is gone");
  t.equal(message(await call('methods', 'eth_gasPrice', [])), 'method not allowed: eth_gasPrice', "the code's entry for another key still applies");
});

t.test('refused calls never reach the ledger or the throughput bucket', async (t) => {
  ledger.debits.length = 0;
  for (const [id, method, params, headers] of [
    ['methods', 'eth_gasPrice', [], {}],
    ['origins', 'eth_chainId', [], { origin: 'https://evil.test' }],
    ['agents', 'eth_chainId', [], {}],
    ['addresses', 'eth_getCode', [FIRST, 'latest'], {}],
  ] as const) {
    t.equal(code(await call(id, method, [...params], headers)), -33100, `${id}: refused`);
  }
  t.same(ledger.debits, [], 'no debit was even attempted');

  // The tiny plan: 80 credits per second (one eth_getBalance) and 100 a day. The clock stands still.
  const tiny = (params: unknown[]): Promise<RawAnswer> => call('tiny', 'eth_getBalance', params);
  for (let i = 0; i < 3; i++) t.equal(code(await call('tiny', 'eth_gasPrice', [])), -33100, 'a refused call');
  t.equal((await tiny([SECOND, 'latest'])).status, 200, 'the first allowed call still has the whole second of throughput');
  t.same(ledger.debits, ['tiny'], 'only the allowed call was debited');
  t.equal(code(await tiny([SECOND, 'latest'])), -33200, 'a second allowed call in the same second is throttled: the bucket is real');
  clock.advance(1_000);
  t.equal(code(await call('tiny', 'eth_gasPrice', [])), -33100, 'with the daily balance nearly spent, a refused call is still a 403, not a 402');
  t.equal(code(await tiny([SECOND, 'latest'])), -33000, 'an allowed call meets the spent balance');
  t.equal((await ledger.balance('tiny', 100, new Date(clock.now()))).used, 80);
});

t.test('the rules, without a gateway', async (t) => {
  const { lists } = compileSecurity({ origins: ['https://app.example.com:443', 'chrome-extension://abcdefgh'], addresses: [SECOND.toUpperCase().replace('0X', '0x')] });
  const input = (origin: string, method = 'eth_chainId', params: unknown[] = []): { method: string; params: unknown; meta: { origin: string } } => ({ method, params, meta: { origin } });
  t.equal(refusalOf(lists, input('https://app.example.com')), undefined, "an entry with the scheme's default port matches the origin without one");
  t.equal(refusalOf(lists, input('chrome-extension://abcdefgh')), undefined, 'an extension origin');
  t.equal(refusalOf(lists, input('https://app.example.com', 'eth_getLogs', [{ address: SECOND.toLowerCase() }])), undefined, 'addresses compare case-insensitively');
  t.equal(refusalOf(lists, input('https://app.example.com\u0007evil'))?.reason, 'origin not allowed: https://app.example.com?evil', 'control characters are not echoed');
  t.notOk(originMatches(parseOriginPattern('*.example.com'), 'example.com'), 'a bare host is not an origin');
  t.notOk(originMatches(parseOriginPattern('*.example.com'), 'https://.example.com'), 'an empty label is not a subdomain');
  for (const bad of ['*', 'https://*.*.example.com', 'https://app.example.com/', 'https://app.*.com', 'app.example.com:0', 'app.example.com:70000', 'https://app example.com']) {
    t.throws(() => parseOriginPattern(bad), `"${bad}" is refused`);
    t.same(keySecurityProblems({ origins: [bad] }, 'o').length, 1, `"${bad}" is refused by the settings' schema too`);
  }
  for (const good of ['https://app.example.com:443', 'chrome-extension://abcdefgh', '*.example.com', 'HTTPS://App.Example.COM', 'http://localhost:3000', 'app.example.com:65535']) {
    parseOriginPattern(good);
    t.same(keySecurityProblems({ origins: [good] }, 'o'), [], `"${good}" is accepted by the schema and the parser alike`);
  }
});

t.test('bad settings are refused when the gateway is assembled, every problem named', async (t) => {
  t.throws(() => security({ keys: { a: { addresses: ['0x1234'] } } }), new ConfigError(['security().keys.a.addresses[0]: must be an address: 0x and 40 hex digits']));
  const error = await startTestGateway(
    {
      networks: [{ name: 'x', families: ['evm'], upstreams: [{ url: 'http://127.0.0.1:1' }] }],
      keys: [{ key: 'bad-settings-key-01', id: 'c', plan: 'growth', settings: { security: { networks: { x: 'off' }, requireSecret: true, jwt: { keys: [] } } } }],
      plugins: { security: { keys: { a: { origins: ['https://app.example.com/path'], agents: ['x'], methods: ['eth call', 7] }, b: [] }, extra: true } },
    },
    [evmFamily(), security()],
  ).then(() => undefined, (e: unknown) => e);
  t.ok(error instanceof ConfigError, 'a ConfigError');
  t.same((error as ConfigError).problems, [
    'plugins.security.extra: is not a known field',
    'plugins.security.keys.a.agents: is not a known field',
    'plugins.security.keys.a.methods[0]: must be a method name without spaces',
    'plugins.security.keys.a.methods[1]: must be a non-empty string',
    'plugins.security.keys.a.origins[0]: must be an origin such as https://app.example.com, https://*.example.com or *.example.com (no path, "*." only at the start)',
    'plugins.security.keys.b: must be an object',
    'keys[0].settings.security: requireSecret and a required jwt cannot both be on (both travel in the Authorization header); set jwt.required to false or drop requireSecret',
    'keys[0].settings.security.networks.x: must be true or false',
    'keys[0].settings.security.jwt.keys: must be an array of 1 to 3 public keys ({ kid, alg, publicKey })',
  ]);
});
