/**
 * Child process of the `failover` scenario: the Tollgate gateway in front of two primaries and a partner
 * provider, with the default failover settings, on a plan that may fail over. Besides the gateway it
 * answers `GET /__bench/status` with the upstream selector's status (breakers, heads, counters).
 * Args: `--primary-a <url> --primary-b <url> --partner <url> --key <api key>`; the network is `eth`.
 */
import 'reflect-metadata';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createGateway } from 'tollgate';
import { Tokens } from 'tollgate/plugin';
import { httpTransport } from 'tollgate/plugins/http';
import { evmFamily } from 'tollgate/plugins/evm';
import { requireArg, serve, serverArgs } from './serve.js';

const STATUS_PATH = '/__bench/status';

const args = serverArgs();
await serve(async () => {
  const gateway = await createGateway({
    config: {
      server: { host: '127.0.0.1', port: 0 },
      log: { level: 'silent' },
      plans: { bench: { dailyCredits: 1e12, creditsPerSecond: 1e9, failover: true } },
      keys: [{ key: requireArg(args, 'key'), plan: 'bench' }],
      networks: [
        {
          name: 'eth',
          families: ['evm'],
          upstreams: [
            { name: 'primary-a', url: requireArg(args, 'primary-a') },
            { name: 'primary-b', url: requireArg(args, 'primary-b') },
            { name: 'partner', url: requireArg(args, 'partner'), role: 'partner' },
          ],
        },
      ],
      upstreamDefaults: { connections: 64 },
    },
    plugins: [httpTransport(), evmFamily()],
  });
  const selector = gateway.container.resolve(Tokens.UpstreamSelector);
  const server = createServer({ keepAliveTimeout: 65_000 }, (req, res) => {
    if (req.method === 'GET' && req.url === STATUS_PATH) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(selector.status?.() ?? []));
      return;
    }
    gateway.listener(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    pids: [process.pid],
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await gateway.close();
    },
  };
});
