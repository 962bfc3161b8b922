import 'reflect-metadata';
import t from 'tap';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createGateway, Tokens } from '../core/index.js';
import { evmFamily } from '../plugins/evm/index.js';
import { startTinyUpstream } from './helpers/tiny-upstream.js';

// The gateway's own lookups (Network.rpc: a block's gas limit, say) follow the selector's view of
// health: a node that hangs is not asked while a healthy one can answer.
t.test("Network.rpc asks healthy upstreams before one the selector took out", async (t) => {
  const methods: string[] = [];
  const hanging = createServer((req) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => methods.push((JSON.parse(Buffer.concat(chunks).toString()) as { method: string }).method));
  });
  await new Promise<void>((resolve) => hanging.listen(0, '127.0.0.1', resolve));
  const good = await startTinyUpstream();
  const gateway = await createGateway({
    config: {
      log: { level: 'silent' },
      networks: [{
        name: 'eth',
        families: ['evm'],
        upstreams: [{ name: 'hanging', url: `http://127.0.0.1:${(hanging.address() as AddressInfo).port}` }, { name: 'good', url: good.url }],
        failover: { probe: { intervalMs: 50, timeoutMs: 100 }, breaker: { failureThreshold: 1, cooldownMs: 60_000 } },
      }],
      upstreamDefaults: { timeoutMs: 20_000 },
    },
    plugins: [evmFamily()],
  });
  t.teardown(async () => {
    await gateway.close();
    hanging.closeAllConnections();
    await new Promise<void>((resolve) => hanging.close(() => resolve()));
    await good.close();
  });
  const selector = gateway.container.resolve(Tokens.UpstreamSelector);
  const deadline = Date.now() + 10_000;
  while (selector.status!().find((u) => u.name === 'hanging')?.healthy !== false && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  t.equal(selector.status!().find((u) => u.name === 'hanging')?.healthy, false, 'the probes took the hanging node out');

  const network = gateway.networks.get('eth')!;
  t.equal(await network.rpc('eth_chainId', []), '0x1', 'answered by the healthy node');
  t.notOk(methods.includes('eth_chainId'), 'the hanging node was not asked');
});
