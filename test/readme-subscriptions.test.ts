/**
 * README's embedding snippet, run as written against an Anvil (its `ETH_NODE` and `ETH_NODE_WS`), serves
 * `eth_subscribe` as README says; a network whose upstreams have no `wsUrl` refuses a subscription with
 * `-32004` (retrying does not help), not the retry-later `-33503`.
 */
import t from 'tap';
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startAnvil } from '@tollgate/devnet';
import { createGateway, type Gateway } from '../core/index.js';
import { evmFamily } from '../plugins/evm/index.js';
import { httpTransport } from '../plugins/http/index.js';
import { wsTransport } from '../plugins/ws/index.js';
import { until } from './helpers/until.js';
import { openWs } from './helpers/ws-client.js';
import { TSX_NODE_ARGS } from './helpers/tsx-node-args.js';

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
const snippet = /```js\n\/\/ main\.mjs\n([\s\S]*?)```/.exec(readme)?.[1];
t.ok(snippet, "README's main.mjs");
const anvil = await startAnvil();
t.teardown(() => anvil.stop());

t.test("README's snippet: eth_subscribe newHeads delivers the next block", async (t) => {
  const file = join(t.testdir(), 'main.mjs');
  writeFileSync(file, snippet!);
  const child = spawn(process.execPath, [...TSX_NODE_ARGS, file], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ETH_NODE: anvil.url, ETH_NODE_WS: anvil.wsUrl, PORT: '0' } });
  t.teardown(() => { if (child.exitCode === null) child.kill('SIGKILL'); });
  let output = '';
  child.stdout.on('data', (c: Buffer) => (output += c));
  child.stderr.on('data', (c: Buffer) => (output += c));
  await until('the snippet listens', () => /Listening on http:\/\/127\.0\.0\.1:\d+/.test(output), 60_000);
  const origin = /Listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(output)![1]!;
  const ws = await openWs(`ws${origin.slice(4)}/rpc/eth/ws/v3/my-first-key-0001`);
  t.teardown(() => ws.close());
  ws.send({ jsonrpc: '2.0', id: 1, method: 'eth_subscribe', params: ['newHeads'] });
  const [answer] = await ws.waitFor(1);
  t.match(answer, { jsonrpc: '2.0', id: 1, result: /^0x[0-9a-f]+$/ }, 'a subscription id, not an error');
  const subscription = (answer as { result: string }).result;
  await anvil.rpc('evm_mine');
  const [, event] = await ws.waitFor(2);
  t.match(event, { jsonrpc: '2.0', method: 'eth_subscription', params: { subscription, result: { number: /^0x[0-9a-f]+$/, hash: /^0x[0-9a-f]{64}$/ } } });
  child.kill('SIGTERM');
  await until('the snippet stopped', () => child.exitCode !== null || child.signalCode !== null, 30_000);
});

t.test('an upstream without a wsUrl: eth_subscribe gets a clear, non-retryable error', async (t) => {
  const gateway: Gateway = await createGateway({
    config: { log: { level: 'silent' }, keys: [{ key: 'no-ws-key-0001', plan: 'growth' }], networks: [{ name: 'eth', families: ['evm'], upstreams: [{ url: anvil.url }] }] },
    plugins: [httpTransport(), wsTransport(), evmFamily()],
  });
  t.teardown(() => gateway.close());
  const server = await gateway.listen(0, '127.0.0.1');
  const port = (server.address() as { port: number }).port;
  const ws = await openWs(`ws://127.0.0.1:${port}/eth/ws/v3/no-ws-key-0001`);
  t.teardown(() => ws.close());
  ws.send({ jsonrpc: '2.0', id: 7, method: 'eth_subscribe', params: ['newHeads'] });
  const [answer] = await ws.waitFor(1);
  t.match(answer, { jsonrpc: '2.0', id: 7, error: { code: -32004, message: /network "eth" has no upstream with a WebSocket URL \(wsUrl\)/ } });
  ws.send({ jsonrpc: '2.0', id: 8, method: 'eth_blockNumber', params: [] });
  const [, other] = await ws.waitFor(2);
  t.match(other, { id: 8, result: /^0x/ }, 'other calls still work over the same socket');
});
