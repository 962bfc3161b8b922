import t from 'tap';
import { createServer, type Socket } from 'node:net';
import { createPublicClient, http } from 'viem';
import { Tokens } from '../core/plugin-api.js';
import { type CreditLedger } from '../core/store-api.js';
import { httpTransport } from '../plugins/http/index.js';
import { evmFamily } from '../plugins/evm/index.js';
import { devnet } from '@tollgate/devnet';
import { startTestGateway } from './helpers/gateway.js';
import { post, rpc } from './helpers/json-rpc.js';

const KEY = 'getlogs-limits-key-01';

t.test('more than 10,000 results: -32005 "query returned more than 10000 results", not charged', async (t) => {
  const dev = devnet();
  const gw = await startTestGateway(
    { keys: [{ key: KEY, id: 'logs', plan: 'growth' }], networks: [{ name: 'bulk', families: ['evm'], upstreams: [{ embedded: 'anvil#bulk' }], options: { bulkLogs: 10_001 } }] },
    [httpTransport(), evmFamily(), dev],
  );
  t.teardown(() => gw.close());
  const seed = dev.getSeed('anvil#bulk');
  t.ok(seed.totalLogs > 10_000, `the chain holds ${seed.totalLogs} logs`);
  const client = createPublicClient({ transport: http(gw.url('bulk', KEY), { retryCount: 0 }) });
  const ledger = gw.gateway.container.resolve<CreditLedger>(Tokens.CreditLedger);

  const error = await client.getLogs({ address: seed.contract.address, fromBlock: 0n, toBlock: 'latest' }).catch((e: { code: number; details: string }) => e);
  t.equal((error as { code: number }).code, -32005);
  t.equal((error as { details: string }).details, 'query returned more than 10000 results');
  t.equal((await ledger.balance('logs', 1e9, new Date())).used, 0, 'the refused query was refunded');

  const bulk = seed.bulkLogs!;
  const narrowed = await client.getLogs({ address: seed.contract.address, fromBlock: BigInt(bulk.fromBlock), toBlock: BigInt(bulk.fromBlock) });
  t.ok(narrowed.length > 0 && narrowed.length <= 10_000, `a narrower range is served (${narrowed.length} logs)`);
  t.equal((await ledger.balance('logs', 1e9, new Date())).used, 255);
});

t.test('a query that runs past the time limit: -32005 "query timeout exceeded", not charged', async (t) => {
  // A node that accepts connections and never answers.
  const sockets = new Set<Socket>();
  const silent = createServer((socket) => { sockets.add(socket); socket.on('error', () => {}); });
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  t.teardown(() => { for (const s of sockets) s.destroy(); silent.close(); });
  const port = (silent.address() as { port: number }).port;
  const gw = await startTestGateway(
    {
      keys: [{ key: KEY, id: 'slow', plan: 'growth' }],
      networks: [{ name: 'slow', families: ['evm'], upstreams: [{ url: `http://127.0.0.1:${port}` }, { url: `http://127.0.0.1:${port}/second` }] }],
      plugins: { evm: { getLogsTimeoutMs: 300 } },
    },
    [httpTransport(), evmFamily()],
  );
  t.teardown(() => gw.close());
  const started = performance.now();
  const res = await post(gw.url('slow', KEY), rpc('eth_getLogs', [{ fromBlock: '0x0', toBlock: 'latest' }]));
  const elapsed = performance.now() - started;
  t.equal(res.status, 200);
  t.same(res.json, { jsonrpc: '2.0', id: 1, error: { code: -32005, message: 'query timeout exceeded' } });
  t.ok(elapsed < 2_000, `answered after the query's own deadline, without trying the second node (${Math.round(elapsed)} ms)`);
  const ledger = gw.gateway.container.resolve<CreditLedger>(Tokens.CreditLedger);
  t.equal((await ledger.balance('slow', 1e9, new Date())).used, 0, 'refunded');
});

