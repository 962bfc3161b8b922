import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { create, type KuboRPCClient } from 'kubo-rpc-client';
import { ledgerSqlite } from '../plugins/ledger-sqlite/index.js';
import { basic, startIpfsGateway, type IpfsTestGateway } from './helpers/ipfs-gateway.js';

// With the SQLite store, the gateway keeps who pinned what in the database: after a restart each key
// still sees its own pins only, and a key's stored bytes still count against its plan.

const dir = mkdtempSync(join(tmpdir(), 'tollgate-pins-sqlite-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const KEYS = {
  a: { key: 'pins-sqlite-key-a-0001', secret: 'pins-sqlite-secret-a', id: 'sq-a', plan: 'starter' },
  b: { key: 'pins-sqlite-key-b-0001', secret: 'pins-sqlite-secret-b', id: 'sq-b', plan: 'starter' },
};

function start(): Promise<IpfsTestGateway> {
  return startIpfsGateway({
    dataDir: join(dir, 'ipfs'),
    config: {
      keys: Object.values(KEYS),
      plans: { starter: { dailyCredits: 1_000_000, creditsPerSecond: 1_000, failover: false } },
      plugins: {
        ipfs: { secretChecksPerSourcePerSecond: 50, secretChecksPerSecond: 50, plans: { starter: { readsPerSecond: 50, writesPerSecond: 50, storageBytes: 40 } } },
        'ledger-sqlite': { path: join(dir, 'tollgate.db') },
      },
    },
    plugins: [ledgerSqlite()],
  });
}

function clientOf(gw: IpfsTestGateway, key: { key: string; secret: string }): KuboRPCClient {
  return create({ url: gw.api, headers: { authorization: basic(key.key, key.secret) } });
}

async function pinsOf(client: KuboRPCClient): Promise<string[]> {
  const cids: string[] = [];
  for await (const pin of client.pin.ls()) cids.push(pin.cid.toString());
  return cids.sort();
}

t.test('pins and stored bytes outlive a restart', async (t) => {
  const first = await start();
  const added = await clientOf(first, KEYS.a).add(new TextEncoder().encode('hello world\n'));
  t.same(await pinsOf(clientOf(first, KEYS.b)), [], 'B has none');
  await first.close();

  const second = await start();
  t.teardown(() => second.close());
  const a = clientOf(second, KEYS.a);
  t.same(await pinsOf(a), [added.cid.toString()], 'A\'s pin is still A\'s');
  t.same(await pinsOf(clientOf(second, KEYS.b)), [], 'and still not B\'s');
  // 20 bytes stored of 40: another 20-byte file fits, a third does not.
  t.equal((await a.add(new TextEncoder().encode('hello Mars\n'))).size, 19);
  await t.rejects(a.add(new TextEncoder().encode('hello Venus\n')), { message: /^storage limit reached: the plan allows 40 bytes pinned, the key has 39, adding 20$/ });
});
