/** Child process: the answer-from-memory ceiling. Args: `--upstream <url> --call <JSON-RPC call>`. */
import { startStaticAnswer } from '../static-answer.js';
import { requireArg, serve, serverArgs } from './serve.js';

const args = serverArgs();
await serve(async () => {
  const server = await startStaticAnswer({ upstream: requireArg(args, 'upstream'), call: requireArg(args, 'call') });
  return { port: server.port, pids: [process.pid], close: () => server.close() };
});
