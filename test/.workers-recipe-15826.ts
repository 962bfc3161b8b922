import 'reflect-metadata';
import cluster from 'node:cluster';
import { createGateway, pinEmbeddedUpstreams } from 'tollgate';
import { httpTransport } from 'tollgate/plugins/http';
import { evmFamily } from 'tollgate/plugins/evm';
import { ledgerSqlite } from 'tollgate/plugins/ledger-sqlite';
import { metrics, groupMetrics, gatewayLogger } from 'tollgate/plugins/metrics';
import { health } from 'tollgate/plugins/health';
import { runWorker, superviseWorkers, workerCount } from 'tollgate/plugins/workers';

const config = {
  server: { port: 37213 },
  keys: [{ key: 'my-api-key-123', plan: 'growth' }],
  networks: [{ name: 'eth', families: ['evm'], upstreams: [{ url: 'http://127.0.0.1:38159' }] }],
};

if (cluster.isPrimary) {
  const group = superviseWorkers({
    workers: workerCount('auto'),
    data: config, // sent to each worker over IPC: plain JSON
    logger: gatewayLogger('info'),
    answers: { metrics: groupMetrics() }, // one /metrics for the whole group
  });
  await group.serving;
  process.exitCode = await group.stopped; // 0 after a clean drain on SIGTERM
} else {
  await runWorker<typeof config>(async (config) => {
    const gateway = await createGateway({
      config,
      plugins: [ledgerSqlite({ path: "/tmp/tollgate-recipe-yHkqaJ/tollgate.db" }), metrics(), health(), httpTransport(), evmFamily()],
    });
    await gateway.listen(); // every worker listens on the same port
    return gateway; // the primary's drain calls gateway.close()
  });
}
