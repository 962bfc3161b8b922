import { MissingPeerError, type GatewayConfig, type GatewayConfigInput, type TollgatePlugin } from 'tollgate';

/** The package of the embedded, offline upstreams the demo runs on. */
export const DEVNET_PACKAGE = '@tollgate/devnet';

/** What the bundled gateway uses of the devnet package (imported by name at run time: tollgate does not depend on it). */
interface DevnetModule {
  devnet(): TollgatePlugin;
}

/** Packages the bundled gateway needs that are not installed, named in one line with the command that adds them. */
export class MissingPackagesError extends Error {
  /** The npm packages to install. */
  readonly packages: readonly string[];
  constructor(packages: readonly string[], why: string) {
    super(`tollgate: ${why} needs packages that are not installed: npm install ${packages.join(' ')}`);
    this.name = 'MissingPackagesError';
    this.packages = packages;
  }
}

/** Whether a network of the config runs on an embedded upstream (`embedded: anvil`), which the devnet package provides. */
export function usesEmbeddedUpstreams(config: GatewayConfigInput | GatewayConfig): boolean {
  return config.networks.some((network) => (network.upstreams ?? []).some((upstream) => upstream.embedded !== undefined));
}

function isDevnetMissing(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === 'ERR_MODULE_NOT_FOUND' && String((error as Error).message).includes(`'${DEVNET_PACKAGE}'`);
}

/** What {@link loadBundledPlugins} could load on this installation. */
export interface LoadedPlugins {
  /** The plugins whose packages are installed, in the order the gateway registers them. */
  readonly plugins: TollgatePlugin[];
  /** The packages missing for the others, when any are (one install command covers them all). */
  readonly missing: MissingPackagesError | undefined;
  /** What the plugins that could not load would have provided: their names (settings sections) and families. */
  readonly unloaded: readonly string[];
}

/**
 * Every plugin the bundled gateway loads; the config decides which networks use which family. Given the
 * config, the operator's plugins come first (operator-plugins.ts): the store it selects (SQLite by
 * default, Redis with `plugins.ledger-redis`), the admin API, metrics and access logs. Keys' security
 * settings (allowlists, secret, network toggles, JWT) apply in every case; traces only with
 * `plugins.otel` set (and `enabled`). Without a config, keys, balances and usage stay in memory. The devnet plugin is added when a network uses an embedded
 * upstream (always without a config).
 *
 * Plugins are imported here, not at the top of the module, so that commands which serve nothing load
 * none of their drivers; every missing driver is reported at once as a {@link MissingPackagesError}.
 */
export async function bundledPlugins(config?: GatewayConfigInput | GatewayConfig): Promise<TollgatePlugin[]> {
  const { plugins, missing } = await loadBundledPlugins(config);
  if (missing !== undefined) throw missing;
  return plugins;
}

/**
 * The plugins of {@link bundledPlugins} that this installation can load, and what keeps the others from
 * loading: for a check that reports a missing driver among the configuration's other problems.
 */
export async function loadBundledPlugins(config?: GatewayConfigInput | GatewayConfig): Promise<LoadedPlugins> {
  const embedded = config === undefined || usesEmbeddedUpstreams(config);
  // A family plugin, with its driver (bs58 for Solana, multiformats for the file API), is loaded only when
  // a network of the config uses the family: an EVM-only gateway needs neither.
  // A family name the command does not bundle (a typo) loads them all, so that the refusal lists every one it has.
  const bundled = ['evm', 'polygon', 'solana', 'ipfs'];
  const used = new Set(config === undefined ? bundled : config.networks.flatMap((network) => network.families ?? []));
  const families = [...used].every((name) => bundled.includes(name)) ? used : new Set(bundled);
  const family = <T>(name: string, load: () => Promise<T>): Promise<T | undefined> => (families.has(name) ? load() : Promise.resolve(undefined));
  const [operator, http, ws, evm, polygon, solana, ipfs, security, otel, devnet] = await Promise.allSettled([
    config === undefined ? Promise.resolve(undefined) : import('./operator-plugins.js').then((m) => m.loadOperatorPlugins(config)),
    import('tollgate/plugins/http'),
    import('tollgate/plugins/ws'),
    family('evm', () => import('tollgate/plugins/evm')),
    family('polygon', () => import('tollgate/plugins/polygon')),
    family('solana', () => import('tollgate/plugins/solana')),
    family('ipfs', () => import('tollgate/plugins/ipfs')),
    import('tollgate/plugins/security'),
    // Traces are off unless configured: the OpenTelemetry packages are needed only then.
    config?.plugins?.otel === undefined ? Promise.resolve(undefined) : import('tollgate/plugins/otel'),
    embedded ? (import(DEVNET_PACKAGE) as Promise<DevnetModule>) : Promise.resolve(undefined),
  ]);
  const missing: string[] = [];
  const named: Array<[PromiseSettledResult<unknown>, string]> = [[http, 'http'], [ws, 'ws'], [evm, 'evm'], [polygon, 'polygon'], [solana, 'solana'], [ipfs, 'ipfs'], [security, 'security'], [otel, 'otel'], [devnet, 'devnet']];
  const unloaded: string[] = [];
  for (const [outcome, name] of named) {
    if (outcome.status === 'fulfilled') continue;
    if (outcome.reason instanceof MissingPeerError) missing.push(outcome.reason.packageName);
    else if (isDevnetMissing(outcome.reason)) missing.push(DEVNET_PACKAGE);
    else throw outcome.reason;
    unloaded.push(name);
  }
  if (operator.status === 'rejected') throw operator.reason;
  const operatorLoaded = operator.value;
  if (operatorLoaded !== undefined) {
    missing.unshift(...operatorLoaded.missing);
    unloaded.push(...operatorLoaded.unloaded);
  }
  const loaded = <T>(outcome: PromiseSettledResult<T>): T | undefined => (outcome.status === 'fulfilled' ? outcome.value : undefined);
  const devnetModule = loaded(devnet);
  const plugins = [
    ...(operatorLoaded?.plugins ?? []),
    loaded(http)?.httpTransport(),
    loaded(ws)?.wsTransport(),
    loaded(evm)?.evmFamily(), loaded(polygon)?.polygonFamily(), loaded(solana)?.solanaFamily(), loaded(ipfs)?.ipfs(),
    loaded(security)?.security(),
    loaded(otel)?.otel(),
    devnetModule?.devnet(),
  ].filter((plugin): plugin is TollgatePlugin => plugin !== undefined);
  return {
    plugins,
    missing: missing.length > 0 ? new MissingPackagesError([...new Set(missing)], embedded ? 'the gateway with embedded networks' : 'the gateway') : undefined,
    unloaded,
  };
}
