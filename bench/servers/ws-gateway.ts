/**
 * Child process: the Tollgate gateway with the HTTP and WebSocket transports and its full pipeline (EVM
 * family, metering on the bench plan). Args: `--upstream <url>`.
 */
import 'reflect-metadata';
import { createGateway } from '../../core/index.js';
import { httpTransport } from '../../plugins/http/index.js';
import { wsTransport } from '../../plugins/ws/index.js';
import { evmFamily } from '../../plugins/evm/index.js';
import { benchGatewayConfig } from '../config.js';
import { requireArg, serve, serverArgs } from './serve.js';

const args = serverArgs();
await serve(async () => {
  const gateway = await createGateway({ config: benchGatewayConfig(requireArg(args, 'upstream')), plugins: [httpTransport(), wsTransport(), evmFamily()] });
  const server = await gateway.listen(0, '127.0.0.1');
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return { port, pids: [process.pid], close: () => gateway.close() };
});
