/**
 * Child process: the Tollgate gateway with its full pipeline (HTTP transport, EVM family, metering on the
 * bench plan), its keys' balances, throughput buckets and usage in the store named by `--ledger`:
 * `memory` (the core's defaults), `sqlite` (`--sqlite <file>`), `redis` (`--redis <url>`) or
 * `redis-cluster` (`--cluster host:port,host:port,…`, some nodes of a Redis Cluster).
 */
import 'reflect-metadata';
import { createGateway, type TollgatePlugin } from 'tollgate';
import { httpTransport } from 'tollgate/plugins/http';
import { evmFamily } from 'tollgate/plugins/evm';
import { ledgerSqlite } from 'tollgate/plugins/ledger-sqlite';
import { ledgerRedis } from 'tollgate/plugins/ledger-redis';
import { benchGatewayConfig } from '../config.js';
import { requireArg, serve, serverArgs } from './serve.js';

const args = serverArgs();
const ledger = requireArg(args, 'ledger');
const stores: Record<string, () => TollgatePlugin[]> = {
  memory: () => [],
  sqlite: () => [ledgerSqlite({ path: requireArg(args, 'sqlite') })],
  redis: () => [ledgerRedis({ url: requireArg(args, 'redis'), prefix: 'bench:' })],
  'redis-cluster': () => [ledgerRedis({ cluster: { nodes: requireArg(args, 'cluster').split(',') }, prefix: 'bench:' })],
};
const store = stores[ledger];
if (store === undefined) {
  process.stderr.write(`--ledger must be one of ${Object.keys(stores).join(', ')}\n`);
  process.exit(2);
}
await serve(async () => {
  const gateway = await createGateway({ config: benchGatewayConfig(requireArg(args, 'upstream')), plugins: [...store(), httpTransport(), evmFamily()] });
  const server = await gateway.listen(0, '127.0.0.1');
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return { port, pids: [process.pid], close: () => gateway.close() };
});
