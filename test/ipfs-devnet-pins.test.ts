import t from 'tap';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { create, type KuboRPCClient } from 'kubo-rpc-client';
import { request } from 'undici';
import { startIpfsNode, type IpfsNode } from '../packages/devnet/src/ipfs-node.js';

// The devnet's IPFS node keeps a pin set as kubo does, answering kubo-rpc-client's pin commands, and
// keeps it across restarts.

const dir = mkdtempSync(join(tmpdir(), 'tollgate-devnet-pins-'));
const dataDir = join(dir, 'ipfs');
let node: IpfsNode = await startIpfsNode({ dataDir });
t.teardown(async () => {
  await node.stop();
  rmSync(dir, { recursive: true, force: true });
});
const clientOf = (n: IpfsNode): KuboRPCClient => create({ url: `${n.url}/api/v0` });

async function pinsOf(client: KuboRPCClient): Promise<Map<string, string | undefined>> {
  const pins = new Map<string, string | undefined>();
  for await (const pin of client.pin.ls({ names: true })) pins.set(pin.cid.toString(), pin.name);
  return pins;
}

t.test('add pins, pin commands change the set, and it outlives a restart', async (t) => {
  const client = clientOf(node);
  const added = await client.add(new TextEncoder().encode('hello world\n'));
  const unpinned = await client.add(new TextEncoder().encode('IPFS\n'), { pin: false });
  t.same([...(await pinsOf(client)).keys()], [added.cid.toString()], 'add pins; pin=false does not');
  t.equal((await client.pin.add(unpinned.cid, { name: 'ipfs' })).toString(), unpinned.cid.toString());
  await t.rejects(client.pin.add('QmWkHFpYBZ9mpPRreRbMhhYWXfUhBAue3JkbbpFqwowSRb'), { message: /block was not found locally \(offline\)/ }, 'content the node lacks cannot be pinned');

  await node.stop();
  node = await startIpfsNode({ dataDir });
  const again = clientOf(node);
  t.same(await pinsOf(again), new Map([[added.cid.toString(), undefined], [unpinned.cid.toString(), 'ipfs']]), 'the pins and their names after a restart');
  await again.pin.rm(added.cid);
  await t.rejects(again.pin.rm(added.cid), { message: /not pinned or pinned indirectly/ });
  t.same([...(await pinsOf(again)).keys()], [unpinned.cid.toString()]);
});

t.test('dag/stat counts a DAG\'s unique blocks and their bytes', async (t) => {
  // Bytes that never repeat a chunk (a SHA-256 counter stream), so every leaf is a block of its own.
  const content = Buffer.alloc(600 * 1024);
  for (let at = 0, n = 0; at < content.length; at += 32, n++) createHash('sha256').update(`leaf:${n}`).digest().copy(content, at);
  const added = await clientOf(node).add(content);
  const res = await request(`${node.url}/api/v0/dag/stat?arg=${added.cid.toString()}&progress=false`, { method: 'POST' });
  const stat = (await res.body.json()) as { UniqueBlocks: number; TotalSize: number };
  t.equal(stat.UniqueBlocks, 4, 'a root and three 256 KiB-or-less leaves');
  t.equal(stat.TotalSize, added.size, 'the bytes add reported as the DAG\'s size');
});
