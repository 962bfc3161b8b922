/** Child process: the bare WebSocket relay (`ws` in, undici out). Args: `--upstream <url> [--connections N]`. */
import { startBareWsProxy } from '../bare-ws-proxy.js';
import { UPSTREAM_CONNECTIONS } from '../config.js';
import { requireArg, serve, serverArgs } from './serve.js';

const args = serverArgs();
const connections = Number(args.connections ?? UPSTREAM_CONNECTIONS);
await serve(async () => {
  const proxy = await startBareWsProxy({ upstream: requireArg(args, 'upstream'), connections });
  return { port: proxy.port, pids: [process.pid], close: () => proxy.close() };
});
