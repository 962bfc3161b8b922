import { isDeepStrictEqual } from 'node:util';
import { ConfigError, type GatewayConfig } from 'tollgate';
import type { WorkerGroup } from 'tollgate/plugins/workers';

/** What a worker answers to the primary's `reload` order. */
export type WorkerReloadAnswer = { readonly reloaded: true } | { readonly reloaded: false; readonly problems: readonly string[] };

/** What the primary answers to a worker's `reload-group` request. */
export type GroupReloadAnswer = { readonly config: GatewayConfig } | { readonly problems: readonly string[] };

/** The worker-to-primary topic: reload the whole group. */
export const RELOAD_GROUP = 'reload-group';
/** The primary-to-worker topic: reload with this configuration. */
export const RELOAD_WORKER = 'reload';

/**
 * Points the embedded upstreams of a re-read configuration at the nodes the primary already runs: the
 * same network and position, with the same settings, as at start. An embedded node that was not running at
 * start would have to be started, which only a restart does: such a configuration is refused.
 */
export function pinToRunningNodes(next: GatewayConfig, atStart: GatewayConfig, pinned: GatewayConfig): GatewayConfig {
  const problems: string[] = [];
  for (const [n, network] of next.networks.entries()) {
    for (const [i, upstream] of network.upstreams.entries()) {
      if (upstream.embedded === undefined) continue;
      const startIndex = atStart.networks.findIndex((candidate) => candidate.name === network.name);
      const before = atStart.networks[startIndex]?.upstreams[i];
      const running = pinned.networks[startIndex]?.upstreams[i];
      if (before === undefined || running === undefined || !isDeepStrictEqual(before.embedded, upstream.embedded)) {
        problems.push(`networks[${n}].upstreams[${i}].embedded: this embedded node was not running at start; restart the gateway to start it`);
        continue;
      }
      delete upstream.embedded;
      upstream.url = running.url;
      if (running.wsUrl !== undefined) upstream.wsUrl = running.wsUrl;
    }
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return next;
}

/**
 * The primary's reload of a worker group: reads the configuration again (`read`: the file with the
 * command's flags on top), pins its embedded upstreams to the running nodes, and has every worker reload
 * with it. Every worker checks the same configuration with the same plugins, so all accept it or all
 * refuse it; the first refusal's problems are thrown as a {@link ConfigError}.
 */
export function groupReload(read: () => Promise<GatewayConfig>, atStart: GatewayConfig, pinned: GatewayConfig, group: () => WorkerGroup): () => Promise<GatewayConfig> {
  return async () => {
    const config = pinToRunningNodes(await read(), atStart, pinned);
    const answers = (await group().askWorkers(RELOAD_WORKER, config, 30_000)) as WorkerReloadAnswer[];
    const refused = answers.find((answer): answer is Extract<WorkerReloadAnswer, { reloaded: false }> => !answer.reloaded);
    if (refused !== undefined) throw new ConfigError(refused.problems);
    return config;
  };
}
