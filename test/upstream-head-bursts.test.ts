import t from 'tap';
import { startAnvil } from '@tollgate/devnet';
import { httpTransport } from '../plugins/http/index.js';
import { evmFamily } from '../plugins/evm/index.js';
import { startTestGateway } from './helpers/gateway.js';
import { closedPort } from './helpers/closed-port.js';
import { post, rpc } from './helpers/json-rpc.js';
import { until } from './helpers/until.js';

// One network, two primaries: a healthy Anvil and a node that is down (nothing listens on its port), so
// probes run. Hundreds of blocks mined at once on the healthy node, again and again, while a client polls
// through the gateway: the head answers race the probes, and none of that may make the healthy node look
// lagging. Every call must be answered: zero -33503 "network unavailable".
const node = await startAnvil();
t.teardown(() => node.stop());
const down = `http://127.0.0.1:${await closedPort()}`;

const KEY = 'head-bursts-key-000001';
const gw = await startTestGateway(
  {
    plans: { big: { dailyCredits: 1e12, creditsPerSecond: 1e9, failover: false } },
    keys: [{ key: KEY, id: 'bursts', plan: 'big' }],
    networks: [{ name: 'eth', families: ['evm'], upstreams: [{ name: 'down', url: down }, { name: 'node', url: node.url }] }],
    upstreamDefaults: { timeoutMs: 2_000, connectTimeoutMs: 500 },
    failover: { maxLagBlocks: 5, probe: { intervalMs: 2_000, timeoutMs: 1_000 } },
  },
  [httpTransport(), evmFamily()],
);
t.teardown(() => gw.close());

const BURSTS = 6;
const BLOCKS = 600;

t.test(`${BURSTS} bursts of ${BLOCKS} blocks mined at once, polled through the gateway: every poll is answered`, async (t) => {
  const codes = new Map<string, number>();
  const heads: number[] = [];
  let polling = true;
  const poller = async (method: string, params: unknown[]): Promise<void> => {
    while (polling) {
      const answer = await post(gw.url('eth', KEY), rpc(method, params));
      const json = answer.json as { result?: unknown; error?: { code: number; message: string } };
      if (json.error !== undefined) {
        const label = `${method}: ${json.error.code} ${json.error.message.replace(/\d+/g, 'N')}`;
        codes.set(label, (codes.get(label) ?? 0) + 1);
      } else if (method === 'eth_blockNumber') heads.push(Number.parseInt(json.result as string, 16));
    }
  };
  // Several clients at once, as a dapp's: head reads on separate connections race each other.
  const pollers = [
    ...Array.from({ length: 3 }, () => poller('eth_blockNumber', [])),
    ...Array.from({ length: 3 }, () => poller('eth_getBlockByNumber', ['latest', false])),
    poller('eth_chainId', []),
    poller('eth_getBalance', ['0x0000000000000000000000000000000000000001', 'latest']),
  ];
  for (let burst = 1; burst <= BURSTS; burst++) {
    await node.rpc('anvil_mine', [`0x${BLOCKS.toString(16)}`]);
    const target = burst * BLOCKS;
    // Polls go on until the gateway showed the burst's head: the window where heads race.
    const seen = heads.length;
    await until(`burst ${burst}: the gateway showed head ${target}`, () => heads.slice(seen).some((h) => h >= target) || codes.size > 0);
    const after = heads.length;
    await until(`burst ${burst}: 20 more polls`, () => heads.length >= after + 20 || codes.size > 0);
  }
  polling = false;
  await Promise.all(pollers);
  t.comment(`${heads.length} heads polled, up to ${Math.max(...heads)}`);
  for (const [label, n] of codes) t.comment(`${n} × ${label}`);
  t.equal([...codes].filter(([label]) => label.includes('-33503')).reduce((n, [, count]) => n + count, 0), 0, 'zero -33503 "network unavailable"');
  t.same(Object.fromEntries(codes), {}, 'and no other error either (an answer read just before a burst is asked again, not refused)');
  t.ok(heads.every((h, i) => i === 0 || h >= heads[i - 1]!), 'and the head never went backwards');
});
