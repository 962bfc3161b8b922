import t from 'tap';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { startAnvil } from '@tollgate/devnet';
import { httpTransport } from '../plugins/http/index.js';
import { evmFamily } from '../plugins/evm/index.js';
import { startTestGateway } from './helpers/gateway.js';
import { post, rpc } from './helpers/json-rpc.js';

// An answer below the head a client was already shown is asked again on the same node. A node whose
// answers rise with each ask is catching up (a node mining a burst, a re-ask that raced a later read) and
// is asked again, up to a bound; a node that answers the same head again is behind, and asked no more.
// One Anvil node behind a relay that, when told to, mines one block before each eth_blockNumber it
// passes on: the node catches up one block per ask. The node is put behind the head shown with
// evm_snapshot / evm_revert.
const node = await startAnvil();
t.teardown(() => node.stop());

let minePerAsk = false;
let asks = 0;
const relay: Server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const body = Buffer.concat(chunks);
    const call = JSON.parse(body.toString('utf8')) as { method?: string };
    const forward = async (): Promise<void> => {
      if (call.method === 'eth_blockNumber') {
        asks++;
        if (minePerAsk) await node.rpc('anvil_mine', ['0x1']);
      }
      const answer = await request(node.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      res.writeHead(answer.statusCode, { 'content-type': 'application/json' }).end(Buffer.from(await answer.body.arrayBuffer()));
    };
    forward().catch(() => res.writeHead(502).end());
  });
});
await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
t.teardown(() => new Promise<void>((resolve) => { relay.close(() => resolve()); relay.closeAllConnections(); }));

const KEY = 'head-reask-key-000001';
const gw = await startTestGateway(
  {
    plans: { big: { dailyCredits: 1e12, creditsPerSecond: 1e9, failover: false } },
    keys: [{ key: KEY, id: 'reask', plan: 'big' }],
    networks: [{ name: 'eth', families: ['evm'], upstreams: [{ name: 'node', url: `http://127.0.0.1:${(relay.address() as AddressInfo).port}` }] }],
    // Far from lagging: what is tested is the answer check, not the route.
    failover: { maxLagBlocks: 1_000 },
  },
  [httpTransport(), evmFamily()],
);
t.teardown(() => gw.close());

/** The head the client gets, or the error code. */
async function blockNumber(): Promise<{ head?: number; code?: number }> {
  const json = (await post(gw.url('eth', KEY), rpc('eth_blockNumber', []))).json as { result?: string; error?: { code: number } };
  return json.result !== undefined ? { head: Number.parseInt(json.result, 16) } : { code: json.error?.code };
}

/** Puts the node `blocks` below the head the client has been shown. */
async function showHeadThenFallBehind(blocks: number): Promise<number> {
  const snapshot = await node.rpc('evm_snapshot', []);
  await node.rpc('anvil_mine', [`0x${blocks.toString(16)}`]);
  const shown = await blockNumber();
  await node.rpc('evm_revert', [snapshot]);
  return shown.head!;
}

t.test('a node catching up one block per ask is asked again while it rises, and its answer at the head is served', async (t) => {
  const shown = await showHeadThenFallBehind(5);
  minePerAsk = true;
  t.teardown(() => (minePerAsk = false));
  asks = 0;
  // Asks show head-4, head-3, head-2, head-1, then the head itself.
  t.same(await blockNumber(), { head: shown }, 'served at the head shown');
  t.equal(asks, 5, 'after four re-asks, each answer higher than the last');
});

t.test('a node still rising after the bound is asked no more: -33505', async (t) => {
  const shown = await showHeadThenFallBehind(6);
  minePerAsk = true;
  t.teardown(() => (minePerAsk = false));
  asks = 0;
  t.same(await blockNumber(), { code: -33505 }, 'the head shown is not reached within the bound');
  t.equal(asks, 5, 'one ask and four re-asks');
  t.ok((await node.rpc('eth_blockNumber', [])) === `0x${(shown - 1).toString(16)}`, 'the node stood one block short');
});

t.test('a node answering the same head below the one shown is asked once more, then refused with -33505', async (t) => {
  await showHeadThenFallBehind(3);
  asks = 0;
  t.same(await blockNumber(), { code: -33505 });
  t.equal(asks, 2, 'one ask and one re-ask: a node behind is not asked again and again');
});
