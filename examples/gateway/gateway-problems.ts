import { checkGateway, type GatewayConfig } from 'tollgate';
import { bundledPlugins, MissingPackagesError } from './bundled-plugins.js';

// The sections the bundled gateway reads as switches (the store, the cache's store, traces) besides
// those of the plugins it loads: a section under any other name is a misspelling nothing reads.
const SWITCH_SECTIONS = ['ledger-sqlite', 'ledger-redis', 'cache', 'cache-redis', 'otel'];

/** What {@link gatewayProblems} found. */
export interface GatewayCheck {
  /** Problems of the configuration, one line each naming the field. */
  readonly problems: readonly string[];
  /** Packages the plugins it selects need and this installation lacks (the plugins' settings were not checked then). */
  readonly missing: MissingPackagesError | undefined;
}

/**
 * Every problem `tollgate start` would find in a configuration before it listens, all at once, without
 * starting anything: every plugin's settings, the families and embedded upstreams the networks name,
 * `plugins.<name>` sections no plugin reads; and, apart, the packages the plugins it selects need.
 */
export async function gatewayProblems(config: GatewayConfig): Promise<GatewayCheck> {
  let plugins;
  try {
    plugins = await bundledPlugins(config);
  } catch (error) {
    if (!(error instanceof MissingPackagesError)) throw error;
    return { problems: [], missing: error };
  }
  const names = new Set([...plugins.map((p) => p.name), ...SWITCH_SECTIONS]);
  const unread = Object.keys(config.plugins)
    .filter((name) => !names.has(name))
    .map((name) => `plugins.${name}: no plugin of the gateway is named "${name}" (its plugins: ${[...names].sort().join(', ')})`);
  return { problems: [...checkGateway({ config, plugins }), ...unread], missing: undefined };
}
