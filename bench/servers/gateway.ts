/**
 * Child process: the Tollgate gateway with its full pipeline (HTTP transport, EVM family, metering on the
 * bench plan). Args: `--upstream <url>`, and `--cache memory` to add the response cache (memory store).
 */
import 'reflect-metadata';
import { createGateway } from 'tollgate';
import { httpTransport } from 'tollgate/plugins/http';
import { evmFamily } from 'tollgate/plugins/evm';
import { responseCache } from 'tollgate/plugins/cache';
import { benchGatewayConfig } from '../config.js';
import { requireArg, serve, serverArgs } from './serve.js';

const args = serverArgs();
await serve(async () => {
  const plugins = [httpTransport(), evmFamily(), ...(args.cache === 'memory' ? [responseCache()] : [])];
  const gateway = await createGateway({ config: benchGatewayConfig(requireArg(args, 'upstream')), plugins });
  const server = await gateway.listen(0, '127.0.0.1');
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return { port, pids: [process.pid], close: () => gateway.close() };
});
