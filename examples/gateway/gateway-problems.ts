import { checkGateway, type GatewayConfig } from 'tollgate';
import { loadBundledPlugins, type MissingPackagesError } from './bundled-plugins.js';

// The sections the bundled gateway reads as switches (the store, the cache's store, traces) besides
// those of the plugins it loads: a section under any other name is a misspelling nothing reads.
const SWITCH_SECTIONS = ['ledger-sqlite', 'ledger-redis', 'cache', 'cache-redis', 'otel'];

/** What {@link gatewayProblems} found. */
export interface GatewayCheck {
  /** Problems of the configuration, one line each naming the field. */
  readonly problems: readonly string[];
  /**
   * Packages the plugins it selects need and this installation lacks: `tollgate start` would refuse to
   * start. The settings of those plugins, and the families they provide, could not be checked; the rest was.
   */
  readonly missing: MissingPackagesError | undefined;
}

/**
 * Every problem `tollgate start` would find in a configuration before it listens, all at once, without
 * starting anything: every plugin's settings, the families and embedded upstreams the networks name,
 * `plugins.<name>` sections no plugin reads; and, apart, the packages the plugins it selects need (the
 * other plugins are checked all the same).
 */
export async function gatewayProblems(config: GatewayConfig): Promise<GatewayCheck> {
  const { plugins, missing, unloaded } = await loadBundledPlugins(config);
  const names = new Set([...plugins.map((p) => p.name), ...SWITCH_SECTIONS, ...unloaded]);
  const unread = Object.keys(config.plugins)
    .filter((name) => !names.has(name))
    .map((name) => `plugins.${name}: no plugin of the gateway is named "${name}" (its plugins: ${[...names].sort().join(', ')})`);
  // What a plugin that could not load would provide is not missing from the configuration: its driver is, and is reported as such.
  const providedByUnloaded = (line: string): boolean =>
    unloaded.some((name) => line.includes(`no plugin provides network family "${name}"`)) || (unloaded.includes('devnet') && / no plugin provides embedded upstream "/.test(line));
  const checked = checkGateway({ config, plugins }).filter((line) => !providedByUnloaded(line));
  return { problems: [...checked, ...unread], missing };
}
