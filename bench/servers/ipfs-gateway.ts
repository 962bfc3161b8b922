/**
 * Child process of the `ipfs-cat` and `ipfs-add` scenarios: the Tollgate gateway serving the file-storage API (the ipfs
 * plugin: basic auth with a secret, plan access, request-rate buckets, streamed relay) in front of one
 * IPFS node. Args: `--upstream <url> --key <api key> --secret <secret>`; the network is `ipfs`.
 */
import 'reflect-metadata';
import { createGateway } from 'tollgate';
import { ipfs } from 'tollgate/plugins/ipfs';
import { requireArg, serve, serverArgs } from './serve.js';

const args = serverArgs();
await serve(async () => {
  const gateway = await createGateway({
    config: {
      server: { host: '127.0.0.1', port: 0 },
      log: { level: 'silent' },
      plans: { bench: { dailyCredits: 1e12, creditsPerSecond: 1e9, failover: false } },
      keys: [{ key: requireArg(args, 'key'), secret: requireArg(args, 'secret'), plan: 'bench' }],
      networks: [{ name: 'ipfs', families: ['ipfs'], upstreams: [{ url: requireArg(args, 'upstream') }] }],
      plugins: { ipfs: { plans: { bench: { readsPerSecond: 1e6, writesPerSecond: 1e6 } } } },
    },
    plugins: [ipfs()],
  });
  const server = await gateway.listen(0, '127.0.0.1');
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return { port, pids: [process.pid], close: () => gateway.close() };
});
