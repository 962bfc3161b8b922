/** Child process: the bare node:http + undici proxy. Args: `--upstream <url> [--connections N]`. */
import { startBareProxy } from '../bare-proxy.js';
import { UPSTREAM_CONNECTIONS } from '../config.js';
import { requireArg, serve, serverArgs } from './serve.js';

const args = serverArgs();
const connections = Number(args.connections ?? UPSTREAM_CONNECTIONS);
await serve(async () => {
  const proxy = await startBareProxy({ upstream: requireArg(args, 'upstream'), connections });
  return { port: proxy.port, pids: [process.pid], close: () => proxy.close() };
});
