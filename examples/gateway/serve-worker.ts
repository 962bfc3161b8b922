import type { AddressInfo } from 'node:net';
import { createGateway } from 'tollgate';
import { runWorker } from 'tollgate/plugins/workers';
import { bundledPlugins } from './bundled-plugins.js';
import { banner } from './serve.js';
import type { WorkerAssignment } from './serve-workers.js';

/**
 * One worker of `tollgate start --workers n`: builds the gateway the primary assigned (its embedded
 * nodes already run in the primary), listens on the shared port and answers the primary's `banner`
 * question. Draining (the primary's order, or SIGTERM) closes the gateway: calls in flight are answered
 * and WebSockets closed with 1001.
 */
export async function serveWorker(): Promise<number> {
  await runWorker<WorkerAssignment>(async ({ config, demo, seed }, membership) => {
    const plugins = await bundledPlugins(config);
    const { gatewayLogger } = await import('tollgate/plugins/metrics');
    const gateway = await createGateway({ config, plugins, logger: gatewayLogger(config.log.level).child({ worker: membership.worker }) });
    try {
      const server = await gateway.listen();
      const { port } = server.address() as AddressInfo;
      membership.answer('banner', () => banner(gateway, config, plugins, port, demo, seed));
    } catch (error) {
      await gateway.close();
      throw error;
    }
    return gateway;
  });
  return 0;
}
