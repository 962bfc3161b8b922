import { pino } from 'pino';
import type { GatewayConfig } from '../config/types.js';
import { ConfigError, resolveConfig } from '../config/load-config.js';
import { systemClock } from '../util/clock.js';
import { assemble } from './register-plugins.js';
import { coreContainer } from './core-container.js';
import type { GatewayOptions } from './gateway.js';

/**
 * Everything {@link createGateway} checks before it starts anything, without starting anything: the
 * configuration against the schema and its cross-references, then every plugin's registration (its
 * settings), the families and embedded upstreams the networks name, and the stages' order. Resolves
 * with one line per problem, all at once (empty when the gateway would assemble). What only starting
 * can tell (an unreachable upstream, a port in use) is not checked.
 *
 * @example
 * ```ts
 * const problems = checkGateway({ config, plugins: [httpTransport(), evmFamily()] });
 * if (problems.length > 0) console.error(problems.join('\n'));
 * ```
 */
export function checkGateway(options: Pick<GatewayOptions, 'config' | 'plugins'>): string[] {
  let config: GatewayConfig;
  try {
    config = resolveConfig(options.config);
  } catch (error) {
    if (error instanceof ConfigError) return [...error.problems];
    throw error;
  }
  const container = coreContainer(config, systemClock, pino({ level: 'silent' }));
  return assemble(container, options.plugins ?? [], config).problems.map((p) => p.line);
}
