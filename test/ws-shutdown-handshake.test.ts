/**
 * SIGTERM to `tollgate start` closes every WebSocket with 1001 and completes the closing handshake with a
 * client that answers the close frame at once (it used to stop reading first, so the handshake waited for
 * the grace period and the client saw its close seconds late); a client that never answers is cut after it.
 */
import t from 'tap';
import { connect } from 'node:net';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startAnvil } from '@tollgate/devnet';
import { startServing } from './helpers/example-process.js';
import { TSX_NODE_ARGS } from './helpers/tsx-node-args.js';
import { openWs } from './helpers/ws-client.js';
import { rpc } from './helpers/json-rpc.js';
import { until } from './helpers/until.js';

const CUT = 'did not answer the close frame in time';
const root = fileURLToPath(new URL('..', import.meta.url));
const dir = await mkdtemp(join(tmpdir(), 'tollgate-ws-shutdown-'));
t.teardown(() => rm(dir, { recursive: true, force: true }));
const anvil = await startAnvil();
t.teardown(() => anvil.stop());
const KEY = 'ws-shutdown-key-000001';
const config = join(dir, 'gateway.yaml');
await writeFile(config, `keys:\n  - { key: ${KEY}, plan: growth }\nnetworks:\n  - name: eth\n    families: [evm]\n    upstreams:\n      - url: ${anvil.url}\n`);
const start = (): ReturnType<typeof startServing> =>
  startServing('tollgate start', root, process.execPath, [...TSX_NODE_ARGS, 'examples/gateway/main.ts', 'start', '--config', config, '--data-dir', dir, '--log-level', 'debug'], { TOLLGATE_ADMIN_TOKEN: '', TOLLGATE_REDIS_URL: '' });

t.test('a client that answers the close frame completes the handshake: nothing is cut', async (t) => {
  const gateway = await start();
  t.teardown(() => gateway.stop());
  const client = await openWs(`${gateway.origin.replace('http', 'ws')}/eth/ws/v3/${KEY}`);
  client.send(rpc('eth_chainId', [], 1));
  t.same(await client.waitFor(1), [{ jsonrpc: '2.0', id: 1, result: '0x7a69' }]);
  t.equal(await gateway.stop(), 0, 'SIGTERM drains and exits 0');
  t.equal(await client.closed, 1001);
  t.notMatch(gateway.output(), CUT, 'the closing handshake completed, no connection was cut');
});

t.test('a client that never answers the close frame is cut after the grace period', async (t) => {
  const gateway = await start();
  t.teardown(() => gateway.stop());
  const { port } = new URL(gateway.origin);
  // A WebSocket client of bare TCP: it upgrades, then never reads again.
  const socket = connect(Number(port), '127.0.0.1');
  t.teardown(() => socket.destroy());
  socket.write(`GET /eth/ws/v3/${KEY} HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n`);
  let received = '';
  socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
  await until('the upgrade is answered', () => received.startsWith('HTTP/1.1 101'));
  socket.pause();
  t.equal(await gateway.stop(), 0, 'SIGTERM drains and exits 0');
  t.match(gateway.output(), CUT, 'the silent client was cut');
});
