import type { AddressInfo } from 'node:net';
import { ConfigError, createGateway, type GatewayConfig } from 'tollgate';
import { runWorker } from 'tollgate/plugins/workers';
import { bundledPlugins } from './bundled-plugins.js';
import { banner } from './serve.js';
import { RELOAD_GROUP, RELOAD_WORKER, type GroupReloadAnswer, type WorkerReloadAnswer } from './reload-group.js';
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
    const gateway = await createGateway({
      config,
      plugins,
      logger: gatewayLogger(config.log.level).child({ worker: membership.worker }),
      // A reload asked of this worker (the admin API) is the group's: the primary reads the file once for all.
      reloadVia: async () => {
        const answer = (await membership.askPrimary(RELOAD_GROUP, undefined, 60_000)) as GroupReloadAnswer;
        if ('problems' in answer) throw new ConfigError(answer.problems);
        return answer.config;
      },
    });
    membership.answer(RELOAD_WORKER, (next) => gateway.reload(next as GatewayConfig).then(
      (): WorkerReloadAnswer => ({ reloaded: true }),
      (error: unknown): WorkerReloadAnswer => ({ reloaded: false, problems: error instanceof ConfigError ? error.problems : [String((error as Error)?.message ?? error)] }),
    ));
    // SIGHUP sent to a worker reloads the group, as sent to the primary (without a handler it would end the worker).
    process.on('SIGHUP', () => void gateway.reload().catch(() => undefined));
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
