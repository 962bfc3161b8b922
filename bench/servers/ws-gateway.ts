/**
 * Child process: the Tollgate gateway with the HTTP and WebSocket transports and its full pipeline (EVM
 * family, metering on the bench plan). Args: `--upstream <url>`, and `--ws-upstream <ws url>` for
 * subscriptions. The load generator opens every connection with one key, so the per-key connection cap
 * (a protection against one client, 32 by default) is raised above any connection count the bench uses.
 */
import 'reflect-metadata';
import { createGateway } from 'tollgate';
import { httpTransport } from 'tollgate/plugins/http';
import { wsTransport } from 'tollgate/plugins/ws';
import { evmFamily } from 'tollgate/plugins/evm';
import { benchGatewayConfig } from '../config.js';
import { requireArg, serve, serverArgs } from './serve.js';

const args = serverArgs();
await serve(async () => {
  const gateway = await createGateway({ config: benchGatewayConfig(requireArg(args, 'upstream'), args['ws-upstream']), plugins: [httpTransport(), wsTransport({ maxConnectionsPerKey: 4096 }), evmFamily()] });
  const server = await gateway.listen(0, '127.0.0.1');
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return { port, pids: [process.pid], close: () => gateway.close() };
});
