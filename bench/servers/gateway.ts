/**
 * Child process: the Tollgate gateway with its full pipeline (HTTP transport, EVM family, metering on the
 * bench plan). Args: `--upstream <url>`.
 */
import 'reflect-metadata';
import { createGateway } from '../../core/index.js';
import { httpTransport } from '../../plugins/http/index.js';
import { evmFamily } from '../../plugins/evm/index.js';
import { benchGatewayConfig } from '../config.js';
import { requireArg, serve, serverArgs } from './serve.js';

const args = serverArgs();
await serve(async () => {
  const gateway = await createGateway({ config: benchGatewayConfig(requireArg(args, 'upstream')), plugins: [httpTransport(), evmFamily()] });
  const server = await gateway.listen(0, '127.0.0.1');
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return { port, pids: [process.pid], close: () => gateway.close() };
});
