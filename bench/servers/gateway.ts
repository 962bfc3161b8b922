/**
 * Child process: the Tollgate gateway with its full pipeline (HTTP transport, EVM family, metering on the
 * bench plan). Args: `--upstream <url>`, `--solana <url>` to add a Solana network (and family) in front
 * of that node, and `--cache memory` to add the response cache (memory store).
 */
import 'reflect-metadata';
import { createGateway } from 'tollgate';
import { httpTransport } from 'tollgate/plugins/http';
import { evmFamily } from 'tollgate/plugins/evm';
import { solanaFamily } from 'tollgate/plugins/solana';
import { responseCache } from 'tollgate/plugins/cache';
import { benchGatewayConfig } from '../config.js';
import { requireArg, serve, serverArgs } from './serve.js';

const args = serverArgs();
await serve(async () => {
  const plugins = [httpTransport(), evmFamily(), ...(args.solana === undefined ? [] : [solanaFamily()]), ...(args.cache === 'memory' ? [responseCache()] : [])];
  const gateway = await createGateway({ config: benchGatewayConfig(requireArg(args, 'upstream'), undefined, args.solana), plugins });
  const server = await gateway.listen(0, '127.0.0.1');
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return { port, pids: [process.pid], close: () => gateway.close() };
});
