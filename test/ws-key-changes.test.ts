import t, { type Test } from 'tap';
import { startAnvil } from '@tollgate/devnet';
import { apiKeyHash } from '../core/store-api.js';
import { type GatewayConfigInput } from '../core/index.js';
import { createRedisStore } from '../plugins/ledger-redis/index.js';
import { startGatewayProcess } from './helpers/gateway-process.js';
import { openWs, type RawWsClient } from './helpers/ws-client.js';
import { redisAvailable, startRedisServer } from './helpers/redis-server.js';
import { until } from './helpers/until.js';

// A key revoked, rotated or moved to another plan on one instance reaches the WebSockets open with it on
// every instance: two gateway processes share keys and balances through one Redis; the change is made
// through the key registry of a third party (as the admin API of any instance does).
if (!(await redisAvailable())) {
  t.fail('redis-server is not installed (apt-get install redis-server); these tests need it');
  process.exit(1);
}
const PREFIX = 'ws-keys:';
const redis = await startRedisServer();
t.teardown(() => redis.stop());
const anvil = await startAnvil({ noMining: true });
t.teardown(() => anvil.stop());
const config: GatewayConfigInput = {
  plans: {
    big: { dailyCredits: 1_000_000_000, creditsPerSecond: 1_000_000, failover: false },
    // Room for the subscribe (5) and three heads (50 each).
    small: { dailyCredits: 155, creditsPerSecond: 1_000_000, failover: false },
  },
  keys: [],
  networks: [{ name: 'eth', families: ['evm'], upstreams: [{ name: 'anvil', url: anvil.url, wsUrl: anvil.wsUrl }] }],
  plugins: { 'ledger-redis': { url: redis.url, prefix: PREFIX } },
  // Info lines say when an open connection took a key change in (the plan test waits for it).
  log: { level: 'info' },
};
const instances = await Promise.all([0, 1].map(() => startGatewayProcess({ store: 'redis', config, ws: { pingIntervalMs: 600_000 } })));
t.teardown(() => Promise.all(instances.map((i) => i.kill())));
const store = createRedisStore({ url: redis.url, prefix: PREFIX });
await store.open();
t.teardown(() => store.close());

let made = 0;
/** A managed key on the big plan, known to both instances through Redis. */
async function newKey(): Promise<{ id: string; apiKey: string }> {
  const n = made++;
  const id = `ws-key-${n}`;
  const apiKey = `ws-key-change-${String(n).padStart(10, '0')}`;
  const now = Date.now();
  await store.keys.insert({ id, plan: 'big', keyHash: apiKeyHash(apiKey), keyHint: apiKey.slice(-4), createdAt: now, updatedAt: now });
  return { id, apiKey };
}

type Message = { id?: number; result?: unknown; error?: { code: number }; params?: { subscription: string } };
/** A connection on each instance, each subscribed to new heads and holding the first head. */
async function subscribed(t: Test, apiKey: string): Promise<Array<{ client: RawWsClient; sub: string }>> {
  const clients = await Promise.all(instances.map((i) => openWs(`${i.origin.replace('http', 'ws')}/eth/ws/v3/${apiKey}`)));
  t.teardown(() => { for (const c of clients) c.socket.terminate(); });
  for (const client of clients) client.send({ jsonrpc: '2.0', id: 1, method: 'eth_subscribe', params: ['newHeads'] });
  await Promise.all(clients.map((c) => c.waitFor(1)));
  const subs = clients.map((c) => (c.messages as Message[]).find((m) => m.id === 1)!.result as string);
  await anvil.rpc('evm_mine');
  await Promise.all(clients.map((c) => c.waitFor(2)));
  return clients.map((client, i) => ({ client, sub: subs[i]! }));
}
const heads = (client: RawWsClient, sub: string): number => (client.messages as Message[]).filter((m) => m.params?.subscription === sub).length;

t.test('revoking a key closes its open WebSockets on both instances with 4401; nothing more is sent or charged', async (t) => {
  const key = await newKey();
  const both = await subscribed(t, key.apiKey);
  await store.keys.update(key.id, { revokedAt: Date.now() }, Date.now());
  t.same(await Promise.all(both.map(({ client }) => client.closed)), [4401, 4401], 'both connections closed with 4401');
  await anvil.rpc('evm_mine');
  t.same(both.map(({ client, sub }) => heads(client, sub)), [1, 1], 'each got the one head mined before the revocation');
  const used = (await store.ledger.balance(key.id, 1_000_000_000, new Date())).used;
  t.equal(used, 2 * (5 + 50), 'charged two subscribes and two heads, nothing after');
});

t.test('rotating a key closes the connections opened with the old API key with 4401', async (t) => {
  const key = await newKey();
  const both = await subscribed(t, key.apiKey);
  await store.keys.update(key.id, { keyHash: apiKeyHash(`${key.apiKey}-rotated`), keyHint: 'ated' }, Date.now());
  t.same(await Promise.all(both.map(({ client }) => client.closed)), [4401, 4401], 'both connections closed with 4401');
});

t.test('a plan change applies to the next events: a lower daily balance closes with 4402, charged = delivered', async (t) => {
  const key = await newKey();
  const both = await subscribed(t, key.apiKey);
  both[1]!.client.socket.terminate();
  const { client, sub } = both[0]!;
  // Spent: two subscribes (10) and two heads (100, one on each instance). The small plan (155) pays no more head.
  await store.keys.update(key.id, { plan: 'small' }, Date.now());
  // The change reaches the instance through Redis pub/sub: wait until its open connection took it in.
  const rekeyed = new RegExp(`"key":"${key.id}","plan":"small","msg":"open WebSocket re-keyed`);
  await until('the instance re-keyed the open connection', () => rekeyed.test(instances[0]!.output()), 30_000);
  let code = 0;
  void client.closed.then((c) => { code = c; });
  // Heads are mined one at a time (each once the last was sent) until the change takes hold.
  for (let mined = 0; code === 0 && mined < 20; mined++) {
    const before = heads(client, sub);
    await anvil.rpc('evm_mine');
    await new Promise<void>((resolve) => {
      const check = (): void => { if (code !== 0 || heads(client, sub) > before) resolve(); else void client.waitFor(client.messages.length + 1, 60_000).then(check, check); };
      void client.closed.then(() => resolve());
      check();
    });
  }
  t.equal(code, 4402, 'closed with 4402 once the small plan\'s balance could not pay for a head');
  const used = (await store.ledger.balance(key.id, 1_000_000_000, new Date())).used;
  t.equal(used, 10 + 50 * (1 + heads(client, sub)), 'charged = the subscribes and the heads sent');
  t.ok(used <= 155, 'never more than the small plan allows once it applied');
});
