/**
 * Child process: the gateway of `bench/servers/ledger-gateway.ts` (full pipeline, SQLite store at
 * `--sqlite <file>`) in `--workers <n>` worker processes under `superviseWorkers`, with the metrics
 * plugin so the scenario can read each worker's CPU; `--scheduling round-robin|os` picks how the
 * cluster hands out connections. Reports the primary's and every worker's pid.
 */
import 'reflect-metadata';
import cluster from 'node:cluster';
import { createGateway } from 'tollgate';
import { httpTransport } from 'tollgate/plugins/http';
import { evmFamily } from 'tollgate/plugins/evm';
import { ledgerSqlite } from 'tollgate/plugins/ledger-sqlite';
import { ledgerRedis } from 'tollgate/plugins/ledger-redis';
import { groupMetrics, metrics } from 'tollgate/plugins/metrics';
import { runWorker, superviseWorkers } from 'tollgate/plugins/workers';
import { benchGatewayConfig } from '../config.js';
import { requireArg, serve, serverArgs } from './serve.js';

const args = serverArgs();
if (cluster.isPrimary) {
  const workers = Number(requireArg(args, 'workers'));
  const scheduling = (args.scheduling ?? 'round-robin') as 'round-robin' | 'os';
  await serve(async () => {
    const port = new Promise<number>((resolve) => cluster.once('listening', (_worker, address) => resolve(address.port)));
    const quiet = { info: () => undefined, warn: () => undefined, error: (fields: object, message: string) => process.stderr.write(`${message} ${JSON.stringify(fields)}\n`) };
    const group = superviseWorkers({ workers, scheduling, logger: quiet, data: { upstream: requireArg(args, 'upstream'), sqlite: args.sqlite, redis: args.redis }, answers: { metrics: groupMetrics() } });
    await group.serving;
    return { port: await port, pids: [process.pid, ...group.pids()], close: async () => void (await group.stop()) };
  });
} else {
  await runWorker<{ upstream: string; sqlite?: string; redis?: string }>(async ({ upstream, sqlite, redis }) => {
    const store = redis === undefined ? ledgerSqlite({ path: sqlite! }) : ledgerRedis({ url: redis, prefix: 'bench:' });
    const gateway = await createGateway({ config: benchGatewayConfig(upstream), plugins: [store, metrics(), httpTransport(), evmFamily()] });
    // Port 0 in every worker: the cluster gives them one port.
    await gateway.listen(0, '127.0.0.1');
    return gateway;
  });
}
