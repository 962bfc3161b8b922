import t, { type Test } from 'tap';
import { request as httpRequest } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { startIpfsNode, type IpfsNode } from '@tollgate/devnet';
import { startIpfsGateway, type IpfsTestGateway } from './helpers/ipfs-gateway.js';
import { startKuboStub, type KuboStub } from './helpers/kubo-stub.js';

// object/get against upstreams without the command (kubo removed it in 0.28; others answer 404): the
// gateway serves it from the raw block and answers exactly what kubo answered before.

const HELLO_MARS = 'QmWkHFpYBZ9mpPRreRbMhhYWXfUhBAue3JkbbpFqwowSRb';
const dataDir = mkdtempSync(join(tmpdir(), 'tollgate-ipfs-fallback-'));
t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));

/**
 * A proxy in front of `node` that records each command and answers `object/*` as `lacking` says; with
 * `brokenBlocks`, it answers `block/get` with a proxy's HTTP 502, as a failing upstream would.
 */
async function proxyTo(node: IpfsNode, lacking: 'removed' | '404', brokenBlocks = false): Promise<KuboStub> {
  return startKuboStub((req, res) => {
    if (brokenBlocks && (req.url ?? '').startsWith('/api/v0/block/get')) {
      req.resume();
      res.writeHead(502, { 'content-type': 'text/plain' });
      res.end('bad gateway\n');
      return;
    }
    if ((req.url ?? '').startsWith('/api/v0/object/')) {
      req.resume();
      if (lacking === '404') {
        res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' });
        res.end('404 page not found\n');
      } else {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end('{"Message":"removed, use \'ipfs dag\' or \'ipfs files\' instead","Code":0,"Type":"error"}\n');
      }
      return;
    }
    const forward = httpRequest(`${node.url}${req.url ?? ''}`, { method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    req.pipe(forward);
  });
}

async function objectGet(gw: IpfsTestGateway, query: string): Promise<{ status: number; text: string }> {
  const res = await request(`${gw.api}/object/get?${query}`, { method: 'POST', headers: { authorization: gw.auth } });
  return { status: res.statusCode, text: await res.body.text() };
}

// The reference: a node that still has object/get (as kubo before 0.28), behind the gateway.
const native = await startIpfsGateway({ dataDir });
t.teardown(() => native.close());
const upload = new FormData();
upload.append('file', new Blob(['Hello Mars']), '');
upload.append('file-1', new Blob(['alpha\n']), encodeURIComponent('site/a.txt'));
upload.append('file-2', new Blob([Buffer.alloc(700_000, 7)]), encodeURIComponent('site/big.bin'));
const added = (await (await fetch(`${native.api}/add`, { method: 'POST', headers: { authorization: native.auth }, body: upload })).text())
  .trim().split('\n').map((line) => JSON.parse(line) as { Name: string; Hash: string });
const cidOf = (name: string): string => added.find((e) => e.Name === name)!.Hash;
const raw = (await (await fetch(`${native.api}/add?cid-version=1`, { method: 'POST', headers: { authorization: native.auth }, body: (() => { const f = new FormData(); f.append('file', new Blob(['raw leaf']), ''); return f; })() })).text());
const rawCid = (JSON.parse(raw) as { Hash: string }).Hash;

const queries = [
  `arg=${HELLO_MARS}`,
  `arg=${HELLO_MARS}&data-encoding=base64`,
  `arg=${cidOf('site')}&encoding=json`,
  `arg=${cidOf('site')}&data-encoding=base64`,
  `arg=${cidOf('site/big.bin')}`,
  `arg=/ipfs/${cidOf('site')}/a.txt`,
  `arg=${cidOf('site')}/big.bin&data-encoding=base64`,
];
const expected = new Map<string, { status: number; text: string }>();
for (const query of queries) expected.set(query, await objectGet(native, query));

t.test('the reference answers are kubo\'s', async (t) => {
  t.equal(expected.get(`arg=${HELLO_MARS}`)!.text, '{"Links":[],"Data":"\\b\\u0002\\u0012\\nHello Mars\\u0018\\n"}\n');
  t.equal(expected.get(`arg=${HELLO_MARS}&data-encoding=base64`)!.text, '{"Links":[],"Data":"CAISCkhlbGxvIE1hcnMYCg=="}\n');
  const dir = JSON.parse(expected.get(`arg=${cidOf('site')}&encoding=json`)!.text) as { Links: Array<{ Name: string; Hash: string }> };
  t.same(dir.Links.map((l) => [l.Name, l.Hash]), [['a.txt', cidOf('site/a.txt')], ['big.bin', cidOf('site/big.bin')]]);
});

async function nodeWithContent(): Promise<IpfsNode> {
  const node = await startIpfsNode({ dataDir: mkdtempSync(join(tmpdir(), 'tollgate-ipfs-fallback-node-')) });
  // Same content: copy the blocks through the node's own add (identical CIDs).
  const copy = new FormData();
  copy.append('file', new Blob(['Hello Mars']), '');
  copy.append('file-1', new Blob(['alpha\n']), encodeURIComponent('site/a.txt'));
  copy.append('file-2', new Blob([Buffer.alloc(700_000, 7)]), encodeURIComponent('site/big.bin'));
  await (await fetch(`${node.url}/api/v0/add`, { method: 'POST', body: copy })).text();
  const rawCopy = new FormData();
  rawCopy.append('file', new Blob(['raw leaf']), '');
  await (await fetch(`${node.url}/api/v0/add?cid-version=1`, { method: 'POST', body: rawCopy })).text();
  return node;
}

/** Every query answered 200, byte for byte what the node that still has object/get answers. */
async function answersLikeObjectGet(t: Test, gw: Parameters<typeof objectGet>[0]): Promise<void> {
  for (const query of queries) {
    const answer = await objectGet(gw, query);
    t.equal(answer.status, 200, query);
    t.equal(answer.text, expected.get(query)!.text, `${query}: byte for byte what the node with object/get answers`);
  }
}

t.test('the raw blocks are fetched through the route: a block/get that fails moves on to the next upstream', async (t) => {
  const node = await nodeWithContent();
  const broken = await proxyTo(node, 'removed', true);
  const working = await proxyTo(node, 'removed');
  const gw = await startIpfsGateway({ upstreams: [{ name: 'broken', url: broken.url }, { name: 'working', url: working.url }] });
  t.teardown(async () => {
    await gw.close();
    await broken.close();
    await working.close();
    await node.stop();
    rmSync(node.dataDir, { recursive: true, force: true });
  });
  await answersLikeObjectGet(t, gw);
  const blockGets = (stub: KuboStub): number => stub.requests.filter((r) => r.startsWith('/api/v0/block/get')).length;
  t.ok(blockGets(broken) >= 1, 'the failing upstream was asked for a block');
  t.ok(blockGets(working) >= queries.length, 'and the next upstream served every block');
});

for (const lacking of ['removed', '404'] as const) {
  t.test(`an upstream that answers object/get with ${lacking === 'removed' ? 'kubo 0.28\'s "removed"' : 'HTTP 404'}: served from the raw block`, async (t) => {
    const node = await nodeWithContent();
    const proxy = await proxyTo(node, lacking);
    const gw = await startIpfsGateway({ upstreams: [{ url: proxy.url }] });
    t.teardown(async () => {
      await gw.close();
      await proxy.close();
      await node.stop();
      rmSync(node.dataDir, { recursive: true, force: true });
    });

    await answersLikeObjectGet(t, gw);
    const commands = proxy.requests.map((r) => r.slice('/api/v0/'.length).split('?')[0]);
    t.equal(commands[0], 'object/get', 'the command is tried first');
    t.equal(commands[1], 'block/get', 'then the raw block is fetched');
    t.equal(commands.filter((c) => c === 'object/get').length, 1, 'once an upstream is known to lack it, object/get goes straight to block/get');

    const notProtobuf = await objectGet(gw, `arg=${rawCid}`);
    t.equal(notProtobuf.status, 500);
    t.same(JSON.parse(notProtobuf.text), { Message: 'expected protobuf dag node', Code: 0, Type: 'error' }, 'a raw block is not a dag-pb node');
    const missing = await objectGet(gw, 'arg=QmZ4tDuvesekSs4qM5ZBKpXiZGun7S2CYtEZRB3DYXkjGx');
    t.equal(missing.status, 500);
    t.match(JSON.parse(missing.text), { Message: /could not find QmZ4tDuvesekSs4qM5ZBKpXiZGun7S2CYtEZRB3DYXkjGx/, Code: 0 });
    const noLink = await objectGet(gw, `arg=${cidOf('site')}/nope.txt`);
    t.equal(noLink.status, 500);
    t.same(JSON.parse(noLink.text), { Message: `no link named "nope.txt" under ${cidOf('site')}`, Code: 0, Type: 'error' });
  });
}

t.test('the embedded node can answer as kubo 0.28 does (objectGet: false), and the gateway still serves object/get', async (t) => {
  const gw = await startIpfsGateway({ dataDir, helia: { objectGet: false } });
  t.teardown(() => gw.close());
  const direct = await request(`${gw.devnet.helia.instance()!.url}/api/v0/object/get?arg=${HELLO_MARS}`, { method: 'POST' });
  t.equal(direct.statusCode, 500);
  t.same(await direct.body.json(), { Message: "removed, use 'ipfs dag' or 'ipfs files' instead", Code: 0, Type: 'error' });
  for (const query of queries) t.equal((await objectGet(gw, query)).text, expected.get(query)!.text, query);
});
