import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { create, type KuboRPCClient } from 'kubo-rpc-client';
import { ledgerRedis } from '../plugins/ledger-redis/index.js';
import { basic, startIpfsGateway, type IpfsTestGateway } from './helpers/ipfs-gateway.js';
import { startRedisServer } from './helpers/redis-server.js';

// Two gateway instances on one Redis and one node, as a fleet runs: a key's pins made through one
// instance are its own through the other, and the allowance is one for the whole fleet.

const redis = await startRedisServer();
const dir = mkdtempSync(join(tmpdir(), 'tollgate-pins-redis-'));
const gateways: IpfsTestGateway[] = [];
// The gateways first (the later one first), then their Redis and their node's directory.
t.teardown(async () => {
  for (const gw of gateways.reverse()) await gw.close();
  await redis.stop();
  rmSync(dir, { recursive: true, force: true });
});
const KEYS = {
  a: { key: 'pins-redis-key-a-0001', secret: 'pins-redis-secret-a', id: 'rd-a', plan: 'starter' },
  b: { key: 'pins-redis-key-b-0001', secret: 'pins-redis-secret-b', id: 'rd-b', plan: 'starter' },
};

function start(upstream?: string): Promise<IpfsTestGateway> {
  return startIpfsGateway({
    dataDir: join(dir, 'ipfs'),
    ...(upstream === undefined ? {} : { upstreams: [{ url: upstream }] }),
    config: {
      keys: Object.values(KEYS),
      plans: { starter: { dailyCredits: 1_000_000, creditsPerSecond: 1_000, failover: false } },
      plugins: {
        ipfs: { secretChecksPerSourcePerSecond: 50, secretChecksPerSecond: 50, plans: { starter: { readsPerSecond: 50, writesPerSecond: 50, storageBytes: 40 } } },
        'ledger-redis': { url: redis.url, prefix: 'pins-fleet:' },
      },
    },
    plugins: [ledgerRedis()],
  });
}

const one = await start();
gateways.push(one);
// The second instance proxies the first one's embedded node: one node, two gateways.
const two = await start(one.devnet.helia.instance()!.url);
gateways.push(two);

function clientOf(gw: IpfsTestGateway, key: { key: string; secret: string }): KuboRPCClient {
  return create({ url: gw.api, headers: { authorization: basic(key.key, key.secret) } });
}

async function pinsOf(client: KuboRPCClient): Promise<string[]> {
  const cids: string[] = [];
  for await (const pin of client.pin.ls()) cids.push(pin.cid.toString());
  return cids.sort();
}

t.test('one key\'s pins, one allowance, whichever instance answers', async (t) => {
  const added = await clientOf(one, KEYS.a).add(new TextEncoder().encode('hello world\n'));
  t.same(await pinsOf(clientOf(two, KEYS.a)), [added.cid.toString()], 'A sees its pin through the other instance');
  t.same(await pinsOf(clientOf(two, KEYS.b)), [], 'B does not');

  await clientOf(two, KEYS.b).pin.add(added.cid);
  await clientOf(one, KEYS.b).pin.rm(added.cid);
  t.same(await pinsOf(clientOf(two, KEYS.a)), [added.cid.toString()], 'B\'s pin.rm leaves A\'s pin');
  const chunks: Uint8Array[] = [];
  for await (const chunk of clientOf(two, KEYS.b).cat(added.cid)) chunks.push(chunk);
  t.equal(Buffer.concat(chunks).toString(), 'hello world\n', 'and its content readable');

  t.equal((await clientOf(two, KEYS.a).add(new TextEncoder().encode('hello Mars\n'))).size, 19, '20 + 19 bytes of 40');
  await t.rejects(clientOf(one, KEYS.a).add(new TextEncoder().encode('hello Venus\n')), { message: /^storage limit reached: the plan allows 40 bytes pinned, the key has 39, adding 20$/ }, 'the allowance spans the instances');
});
