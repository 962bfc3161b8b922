/**
 * Child process: the Tollgate gateway with the HTTP and WebSocket transports and its full pipeline (EVM
 * and Solana families, metering on the bench plan). Args: `--upstream <url>`, and `--ws-upstream <ws url>` for
 * subscriptions; `--solana-upstream <url>` and `--solana-ws-upstream <ws url>` add the Solana network. The load generator opens every connection with one key, so the per-key connection cap
 * (a protection against one client, 32 by default) is raised above any connection count the bench uses.
 */
import 'reflect-metadata';
import { createGateway } from 'tollgate';
import { httpTransport } from 'tollgate/plugins/http';
import { wsTransport } from 'tollgate/plugins/ws';
import { evmFamily } from 'tollgate/plugins/evm';
import { solanaFamily } from 'tollgate/plugins/solana';
import { benchGatewayConfig } from '../config.js';
import { requireArg, serve, serverArgs } from './serve.js';

const args = serverArgs();
await serve(async () => {
  const config = benchGatewayConfig(requireArg(args, 'upstream'), args['ws-upstream'], args['solana-upstream'], args['solana-ws-upstream']);
  const gateway = await createGateway({ config, plugins: [httpTransport(), wsTransport({ maxConnectionsPerKey: 4096 }), evmFamily(), solanaFamily()] });
  const server = await gateway.listen(0, '127.0.0.1');
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return { port, pids: [process.pid], close: () => gateway.close() };
});
