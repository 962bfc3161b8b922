/**
 * Child process: the devnet's embedded Solana node (LiteSVM, slots every 400 ms) on its own HTTP port,
 * the upstream of the `solana-http` scenario. Args: none.
 */
import { LiteSvmNode, startLiteSvmServer } from '@tollgate/devnet';
import { serve } from './serve.js';

await serve(async () => {
  const node = new LiteSvmNode();
  const server = await startLiteSvmServer({ node });
  return {
    port: server.port,
    pids: [process.pid],
    close: async () => {
      await server.stop();
      node.stop();
    },
  };
});
