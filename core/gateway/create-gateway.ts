import { pino } from 'pino';
import { resolveConfig } from '../config/load-config.js';
import { EmbeddedUpstreams } from '../network/embedded-upstreams.js';
import { Tokens, type Transport } from '../contracts/plugin.js';
import { PluginError, type PluginErrorCode, type PluginErrorOptions } from '../plugin/plugin-error.js';
import { systemClock } from '../util/clock.js';
import { PlanBook } from '../keys/plan-book.js';
import { PlanRegistryToken } from '../keys/plan-registry.js';
import type { StageDefinition } from '../contracts/stage.js';
import type { CallObserver } from '../contracts/usage.js';
import { callFinisher } from '../metering/call-accounting.js';
import { Started } from './started.js';
import { assemble, assemblyError } from './register-plugins.js';
import { coreContainer, resolveAllOptional } from './core-container.js';
import type { Gateway, GatewayOptions } from './gateway.js';
import { LiveGateway } from './live-gateway.js';
import { buildGeneration, type GenerationKit } from './generation.js';

export { PluginError, type PluginErrorCode, type PluginErrorOptions };
export { coreContainer, keyIdOf } from './core-container.js';
export { checkGateway } from './check-gateway.js';
export type { Gateway, GatewayOptions, HandleRequest } from './gateway.js';

/**
 * Assembles a gateway. First, without any I/O: applies the config, registers the core's defaults and then
 * every plugin into a container of the gateway's own, and checks families and stage order. Then starts,
 * in order: the plugins (`start`), the embedded upstreams and upstream pools, the pipeline and the
 * upstream selector's health checks. When any of it fails, what had started is stopped in reverse order
 * and the promise rejects with a {@link PluginError}: nothing is left running, open or scheduled.
 *
 * @example
 * ```ts
 * import 'reflect-metadata';
 * import { createGateway } from 'tollgate';
 * import { httpTransport } from 'tollgate/plugins/http';
 * import { evmFamily } from 'tollgate/plugins/evm';
 *
 * const gateway = await createGateway({
 *   config: { networks: [{ name: 'eth', families: ['evm'], upstreams: [{ url: 'http://127.0.0.1:8545' }] }],
 *             keys: [{ key: 'my-api-key-123', plan: 'growth' }] },
 *   plugins: [httpTransport(), evmFamily()],
 * });
 * await gateway.listen(8080);
 * ```
 */
export async function createGateway(options: GatewayOptions): Promise<Gateway> {
  const config = resolveConfig(options.config);
  const plugins = options.plugins ?? [];
  const clock = options.clock ?? systemClock;
  const logger = options.logger ?? pino({ level: config.log.level, base: { service: 'tollgate' } });
  const container = coreContainer(config, clock, logger);
  // Every problem at once (each plugin's settings, the families and embedded upstreams networks name).
  const assembled = assemble(container, plugins, config);
  if (assembled.problems.length > 0) throw assemblyError(assembled.problems);
  const transports = resolveAllOptional<Transport>(container, Tokens.Transport);
  const started = new Started(logger);
  const gateway = new LiveGateway({ options, config, container, clock, logger, transports, started });

  for (const plugin of plugins) {
    await started.start(`plugin "${plugin.name}"`, () => plugin.start?.(gateway), () => plugin.stop?.(), plugin.name);
  }
  // The config's plans and the managed ones, in memory: a key's plan never costs a store round trip.
  // Managed plans are read before the first call can need one, and followed until the gateway stops.
  const plans = new PlanBook(() => gateway.config, logger);
  await started.start('the managed plans', async () => {
    if (container.isRegistered(PlanRegistryToken, true)) await plans.follow(container.resolve(PlanRegistryToken));
  }, () => plans.stop());
  // Resolved once the plugins started (stores open in start); the networks' own calls need them too.
  let kit!: GenerationKit;
  await started.start('the gateway\'s services', () => { kit = generationKit(gateway, plans); });
  // The first generation: the same build as every reload's. Its upstreams, and those of every generation
  // not yet closed, close with the gateway before the embedded upstreams stop.
  await started.start('the networks', async () => {
    try {
      gateway.begin(await buildGeneration(config, assembled.families, kit));
    } finally {
      // Stopped with the rest, also when only some embedded upstreams came up.
      started.add('embedded upstreams', () => kit.embedded.stop());
    }
  }, () => gateway.drains.closeAll());
  const { networks, deps } = gateway.generation;
  // Health probes and breaker trials run for the gateway's lifetime; close() stops them.
  await started.start('the upstream selector', () => deps.selector.start?.(networks), () => deps.selector.stop?.());
  // After the selector listens to them: loading the known heads raises its floors.
  const heads = container.resolve(Tokens.SharedHeads);
  await started.start('the shared heads', () => heads.start?.(networks.map((n) => n.name)), () => heads.stop?.());
  return gateway;
}

/** What every generation of `gateway` is built with: the stores and services the plugins started, the stages, the observers. */
function generationKit(gateway: LiveGateway, plans: PlanBook): GenerationKit {
  const { container, clock, logger } = gateway;
  return {
    services: {
      container,
      keys: container.resolve(Tokens.KeyStore),
      plans: plans.get,
      ledger: container.resolve(Tokens.CreditLedger),
      limiter: container.resolve(Tokens.RateLimiter),
      selector: container.resolve(Tokens.UpstreamSelector),
      clock,
      logger,
    },
    embedded: new EmbeddedUpstreams(resolveAllOptional(container, Tokens.EmbeddedUpstream)),
    stages: resolveAllOptional<StageDefinition>(container, Tokens.Stage),
    finished: callFinisher(gateway.recordUsage, resolveAllOptional<CallObserver>(container, Tokens.CallObserver), clock, logger),
    createContext: gateway.createContext,
    execute: gateway.execute,
    drains: gateway.drains,
    logger,
  };
}
