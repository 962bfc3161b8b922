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
  const embedded = config === undefined || usesEmbeddedUpstreams(config);
  // A family plugin, with its driver (bs58 for Solana, multiformats for the file API), is loaded only when
  // a network of the config uses the family: an EVM-only gateway needs neither.
  // A family name the command does not bundle (a typo) loads them all, so that the refusal lists every one it has.
  const bundled = ['evm', 'polygon', 'solana', 'ipfs'];
  const used = new Set(config === undefined ? bundled : config.networks.flatMap((network) => network.families ?? []));
  const families = [...used].every((name) => bundled.includes(name)) ? used : new Set(bundled);
  const family = <T>(name: string, load: () => Promise<T>): Promise<T | undefined> => (families.has(name) ? load() : Promise.resolve(undefined));
  const [operator, http, ws, evm, polygon, solana, ipfs, security, otel, devnet] = await Promise.allSettled([
    config === undefined ? Promise.resolve(undefined) : import('./operator-plugins.js').then((m) => m.operatorPlugins(config)),
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
  for (const outcome of [operator, http, ws, evm, polygon, solana, ipfs, security, otel, devnet]) {
    if (outcome.status === 'fulfilled') continue;
    if (outcome.reason instanceof MissingPeerError) missing.push(outcome.reason.packageName);
    else if (outcome.reason instanceof AggregateError && outcome.reason.errors.every((e) => e instanceof MissingPeerError)) missing.push(...outcome.reason.errors.map((e: MissingPeerError) => e.packageName));
    else if (isDevnetMissing(outcome.reason)) missing.push(DEVNET_PACKAGE);
    else throw outcome.reason;
  }
  if (missing.length > 0) throw new MissingPackagesError([...new Set(missing)], embedded ? 'the gateway with embedded networks' : 'the gateway');
  const loaded = <T>(outcome: PromiseSettledResult<T>): T => (outcome as PromiseFulfilledResult<T>).value;
  const devnetModule = loaded(devnet);
  return [
    ...(loaded(operator) ?? []),
    loaded(http).httpTransport(),
    loaded(ws).wsTransport(),
    ...[loaded(evm)?.evmFamily(), loaded(polygon)?.polygonFamily(), loaded(solana)?.solanaFamily(), loaded(ipfs)?.ipfs()].filter((plugin) => plugin !== undefined),
    loaded(security).security(),
    ...(loaded(otel) === undefined ? [] : [loaded(otel)!.otel()]),
    ...(devnetModule === undefined ? [] : [devnetModule.devnet()]),
  ];
}
