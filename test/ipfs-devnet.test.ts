import t from 'tap';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { create } from 'kubo-rpc-client';
import { request } from 'undici';
import { startIpfsNode } from '@tollgate/devnet';
import { startIpfsGateway } from './helpers/ipfs-gateway.js';

// The devnet's embedded IPFS node (kind `helia`): kubo's wire behaviour, add's flags, and content that
// survives a restart of the gateway.

const dataDir = mkdtempSync(join(tmpdir(), 'tollgate-ipfs-devnet-'));
t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));

t.test('content added before a restart is still there after it (blockstore-fs in the data directory)', async (t) => {
  const first = await startIpfsGateway({ dataDir });
  const client = create({ url: first.api, headers: { authorization: first.auth } });
  const { cid } = await client.add(new TextEncoder().encode('kept across restarts\n'));
  await first.close();
  t.ok(readdirSync(dataDir).length > 0, 'blocks are files in the data directory');

  const second = await startIpfsGateway({ dataDir });
  t.teardown(() => second.close());
  const again = create({ url: second.api, headers: { authorization: second.auth } });
  const chunks: Uint8Array[] = [];
  for await (const chunk of again.cat(cid)) chunks.push(chunk);
  t.equal(Buffer.concat(chunks).toString(), 'kept across restarts\n');
});

t.test('the node on its own: kubo\'s 404, 405, headers and add flags', async (t) => {
  const node = await startIpfsNode({ dataDir });
  t.teardown(() => node.stop());
  t.match(node.url, /^http:\/\/127\.0\.0\.1:\d+$/, 'a loopback port');
  const post = async (path: string, body?: FormData): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; text: string }> => {
    const res = await fetch(`${node.url}/api/v0/${path}`, { method: 'POST', ...(body === undefined ? {} : { body }) });
    return { status: res.status, headers: Object.fromEntries(res.headers), text: await res.text() };
  };
  const form = (...files: Array<[string, string]>): FormData => {
    const f = new FormData();
    files.forEach(([name, content], i) => f.append(i === 0 ? 'file' : `file-${i}`, new Blob([content]), encodeURIComponent(name)));
    return f;
  };

  const unknown = await post('swarm/peers');
  t.equal(unknown.status, 404);
  t.equal(unknown.text, '404 page not found\n');
  const get = await request(`${node.url}/api/v0/version`);
  t.equal(get.statusCode, 405);
  t.equal(get.headers.allow, 'OPTIONS, POST');
  t.equal(await get.body.text(), '405 - Method Not Allowed\n');

  const version = await post('version');
  t.equal(version.status, 200);
  t.match(JSON.parse(version.text), { Version: String, System: String });

  const v1 = await post('add?cid-version=1', form(['', 'hello world\n']));
  t.match(JSON.parse(v1.text), { Hash: /^bafkrei/ }, 'cid-version=1 implies raw leaves, as in kubo');
  const v1Pb = await post('add?cid-version=1&raw-leaves=false', form(['', 'hello world\n']));
  t.match(JSON.parse(v1Pb.text), { Hash: /^bafybei/ }, 'unless raw-leaves=false');

  const onlyHash = await post('add?only-hash=true', form(['', 'never stored\n']));
  const hashOnly = (JSON.parse(onlyHash.text) as { Hash: string }).Hash;
  const cat = await post(`cat?arg=${hashOnly}`);
  t.equal(cat.status, 500, 'only-hash stores nothing');
  t.match(JSON.parse(cat.text), { Message: /block was not found locally/ });

  const wrapped = await post('add?wrap-with-directory=true&quieter=true', form(['one.txt', '1'], ['two.txt', '2']));
  const lines = wrapped.text.trim().split('\n').map((l) => JSON.parse(l) as { Name: string; Hash: string });
  t.equal(lines.length, 1, 'quieter: only the root');
  t.equal(lines[0]!.Name, '', 'the wrapping directory has no name');
  const listing = JSON.parse((await post(`object/get?arg=${lines[0]!.Hash}`)).text) as { Links: Array<{ Name: string }> };
  t.same(listing.Links.map((l) => l.Name), ['one.txt', 'two.txt']);

  const progress = await post('add?progress=true', form(['big.bin', 'x'.repeat(600_000)]));
  const events = progress.text.trim().split('\n').map((l) => JSON.parse(l) as { Name: string; Bytes?: number; Hash?: string });
  t.ok(events.some((e) => e.Bytes !== undefined && e.Bytes > 0), 'progress events carry Bytes');
  t.match(events.at(-1), { Name: 'big.bin', Hash: /^Qm/ }, 'the last event is the file');

  const unsupported = await post('add?chunker=rabin', form(['', 'x']));
  t.equal(unsupported.status, 500);
  t.match(JSON.parse(unsupported.text), { Message: /not supported/ });
  t.ok(existsSync(dataDir));
});

t.test('a node nobody adds to leaves no data directory behind', async (t) => {
  const fresh = join(dataDir, 'not-yet');
  const node = await startIpfsNode({ dataDir: fresh });
  t.teardown(() => node.stop());
  const missing = await fetch(`${node.url}/api/v0/cat?arg=QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o`, { method: 'POST' });
  t.equal(missing.status, 500);
  await missing.text();
  t.notOk(existsSync(fresh), 'reads create nothing');
  t.equal((await node.add([new TextEncoder().encode('hello world\n')])).toString(), 'QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o', 'node.add uses kubo\'s defaults');
  t.ok(existsSync(fresh), 'the first block creates it');
});
