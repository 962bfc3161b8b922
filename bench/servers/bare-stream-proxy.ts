/** Child process: the bare streaming node:http + undici relay of the file-storage scenarios. Args: `--upstream <url>`. */
import { startBareStreamProxy } from '../bare-stream-proxy.js';
import { requireArg, serve, serverArgs } from './serve.js';

const args = serverArgs();
await serve(async () => {
  const proxy = await startBareStreamProxy(requireArg(args, 'upstream'));
  return { port: proxy.port, pids: [process.pid], close: () => proxy.close() };
});
