/** Child process: fastify 5 + @fastify/http-proxy. Args: `--upstream <url> [--connections N]`. */
import { startFastifyProxy } from '../fastify-proxy.js';
import { UPSTREAM_CONNECTIONS } from '../config.js';
import { requireArg, serve, serverArgs } from './serve.js';

const args = serverArgs();
const connections = Number(args.connections ?? UPSTREAM_CONNECTIONS);
await serve(async () => {
  const proxy = await startFastifyProxy({ upstream: requireArg(args, 'upstream'), connections });
  return { port: proxy.port, pids: [process.pid], close: () => proxy.close() };
});
