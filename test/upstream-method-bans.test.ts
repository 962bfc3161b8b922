import t from 'tap';
import { Tokens } from '../core/plugin-api.js';
import { type CreditLedger } from '../core/store-api.js';
import type { FailoverSelector } from '../core/upstream/failover-selector.js';
import { startAnvil, startBorServer, type AnvilInstance } from '@tollgate/devnet';
import { httpTransport } from '../plugins/http/index.js';
import { evmFamily } from '../plugins/evm/index.js';
import { polygonFamily } from '../plugins/polygon/index.js';
import { startTestGateway } from './helpers/gateway.js';
import { startChaosUpstream, until } from './helpers/failover-upstreams.js';
import { post, rpc } from './helpers/json-rpc.js';

// Two real nodes of one network: a plain Anvil, which does not serve bor_getCurrentValidators (-32601),
// and a bor node (the devnet's bor shim in front of another Anvil), which does.
const GENESIS = { args: ['--timestamp', '1700000000'] };
const [plain, behindBor] = (await Promise.all([startAnvil(GENESIS), startAnvil(GENESIS)])) as [AnvilInstance, AnvilInstance];
t.teardown(() => Promise.all([plain.stop(), behindBor.stop()]));
const bor = await startBorServer({ upstream: behindBor.url });
t.teardown(() => bor.stop());
// Counts what the plain node receives.
const plainCounted = await startChaosUpstream(plain.url);
t.teardown(() => plainCounted.close());

const KEY = 'method-ban-key-000001';
const BAN_MS = 1_500;
const gw = await startTestGateway(
  {
    plans: { big: { dailyCredits: 1e12, creditsPerSecond: 1e9, failover: false } },
    keys: [{ key: KEY, id: 'bans', plan: 'big' }],
    networks: [
      { name: 'matic', families: ['evm', 'polygon'], upstreams: [{ name: 'plain', url: plainCounted.url, weight: 1e6 }, { name: 'bor', url: bor.url }] },
      { name: 'eth', families: ['evm', 'polygon'], upstreams: [{ name: 'anvil', url: plain.url }] },
    ],
    failover: { methodBanMs: BAN_MS, probe: { intervalMs: 0, timeoutMs: 1_000 } },
  },
  [httpTransport(), evmFamily(), polygonFamily()],
);
t.teardown(() => gw.close());
const selector = gw.gateway.container.resolve(Tokens.UpstreamSelector) as FailoverSelector;
const ledger = gw.gateway.container.resolve<CreditLedger>(Tokens.CreditLedger);
const used = async (): Promise<number> => (await ledger.balance('bans', 1e12, new Date(gw.gateway.clock.now()))).used;
const plainUpstream = gw.gateway.networks.get('matic')!.upstreams[0]!;
const validatorsCalls = (): number => plainCounted.received.filter((m) => m === 'bor_getCurrentValidators').length;
const validators = (network: string) => post(gw.url(network, KEY), rpc('bor_getCurrentValidators', []));

t.test('a node that answers "method not found" is skipped for that method until the ban expires', async (t) => {
  const answers = [];
  for (let i = 0; i < 10; i++) answers.push(await validators('matic'));
  t.same(answers.map((a) => a.status), Array(10).fill(200));
  t.ok(answers.every((a) => Array.isArray((a.json as { result?: unknown }).result)), 'every call is answered by the node that serves the method');
  t.ok(answers.every((a) => a.headers['x-tollgate-upstream'] === 'bor'));
  t.equal(validatorsCalls(), 1, 'the plain node was asked once, then skipped (though it takes nearly all traffic by weight)');
  t.equal((await post(gw.url('matic', KEY), rpc('eth_chainId', []))).headers['x-tollgate-upstream'], 'plain', 'it still takes the methods it serves');
  const status = selector.status().find((s) => s.name === 'plain')!;
  t.match(status.details, { bannedMethods: [{ method: 'bor_getCurrentValidators' }], breaker: { state: 'closed', consecutiveFailures: 0 } }, 'the ban is visible, and no health failure was counted');

  await until('the ban expired', () => selector.methodBan(plainUpstream, 'bor_getCurrentValidators') === undefined, BAN_MS + 5_000);
  t.equal((await validators('matic')).headers['x-tollgate-upstream'], 'bor');
  t.equal(validatorsCalls(), 2, 'after the ban the plain node is asked again (and banned again)');
  t.equal((await validators('matic')).headers['x-tollgate-upstream'], 'bor');
  t.equal(validatorsCalls(), 2);
});

t.test('when no upstream serves the method the client gets the node\'s own -32601, not 503, and is not charged', async (t) => {
  const before = await used();
  const first = await validators('eth');
  t.equal(first.status, 200);
  t.match(first.json, { error: { code: -32601 } });
  const nodeSays = await plain.rpc('bor_getCurrentValidators', []).catch((e: Error) => e.message);
  t.match(nodeSays, (first.json as { error: { message: string } }).error.message, 'in the node\'s own words');
  const again = await validators('eth');
  t.equal(again.status, 200, 'while the method is banned on every upstream: still -32601, not 503');
  t.match(again.json, { error: { code: -32601, message: (first.json as { error: { message: string } }).error.message } });
  t.equal(await used(), before, 'neither call was charged');
});
