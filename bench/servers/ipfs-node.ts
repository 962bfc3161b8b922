/**
 * Child process of the `ipfs-cat` and `ipfs-add` scenarios: the devnet's embedded IPFS node (`@helia/unixfs` over
 * `blockstore-fs`, kubo's RPC). Args: `--data-dir <dir>`.
 */
import { startIpfsNode } from '@tollgate/devnet';
import { requireArg, serve, serverArgs } from './serve.js';

const args = serverArgs();
await serve(async () => {
  const node = await startIpfsNode({ dataDir: requireArg(args, 'data-dir') });
  return { port: node.port, pids: [process.pid], close: () => node.stop() };
});
