import { Tokens, type GatewayConfig, type TollgatePlugin } from 'tollgate/plugin';
import type { EmbeddedUpstreamProvider } from 'tollgate/upstream';
import { type NetworkConfig } from 'tollgate';
import { InstanceTracker } from './instance-tracker.js';
import { startDevnetInstance, type DevnetInstance, type DevnetKind } from './devnet-instance.js';
import { DEVNET_OPTIONS_SCHEMA, DEVNET_SECTION_SCHEMA, readDevnetSettings, resolveDevnetSettings, type DevnetSettings, type ResolvedDevnetSettings } from './devnet-settings.js';
import type { DevnetSeed } from './seed-types.js';
import { liteSvmProvider, type LiteSvmProvider } from './solana/provider.js';
import type { LiteSvmInstance, LiteSvmSettings } from './solana/instance.js';
import type { SolanaSeed } from './solana/seed.js';
import { heliaProvider, type HeliaProvider, type HeliaSettings } from './ipfs-provider.js';

/** The plugin's name, and the key of its settings under `plugins` in the config. */
export const DEVNET_PLUGIN = 'devnet';

/** Options of {@link devnet}: defaults for every instance (the config's `plugins.devnet` and a network's `options` override them). */
export type DevnetOptions = DevnetSettings & {
  /** Defaults for every `litesvm` (embedded Solana) instance. */
  readonly litesvm?: LiteSvmSettings;
  /** Defaults for every `helia` (embedded IPFS) instance. */
  readonly helia?: HeliaSettings;
};

/** An {@link EmbeddedUpstreamProvider} of the devnet, whose instances carry their seed. */
export interface DevnetProvider extends EmbeddedUpstreamProvider {
  /** `anvil` or `bor`. */
  readonly kind: DevnetKind;
  /** Starts (and seeds) instance `instance` for `network`. */
  start(instance: string, network: NetworkConfig): Promise<DevnetInstance>;
}

/** The devnet plugin: its providers, and the instances they started (for tests to find the seed). */
export interface DevnetPlugin extends TollgatePlugin {
  /** The `anvil` and `bor` providers. */
  readonly providers: readonly DevnetProvider[];
  /** The `litesvm` provider: embedded Solana upstreams. */
  readonly litesvm: LiteSvmProvider;
  /** The `helia` provider: embedded IPFS nodes for the file-storage API. */
  readonly helia: HeliaProvider;
  /** A started `litesvm` instance (`litesvm` means `litesvm#default`). */
  solanaInstance(id?: string): LiteSvmInstance | undefined;
  /**
   * The seed of a started `litesvm` instance (`litesvm` by default).
   *
   * @throws Error when no such instance was started or it was not seeded.
   */
  getSolanaSeed(id?: string): SolanaSeed;
  /** A started instance by `kind` or `kind#instance` (`anvil` means `anvil#default`); the latest if started twice. */
  instance(id: string): DevnetInstance | undefined;
  /** Every instance started and not yet stopped. */
  instances(): DevnetInstance[];
  /**
   * The seed of a started instance (`anvil` by default).
   *
   * @throws Error when no such instance was started or it was not seeded.
   */
  getSeed(id?: string): DevnetSeed;
  /** Stops every instance it started (the gateway stops them too; both are idempotent). */
  stop(): Promise<void>;
}

function normalizeId(id: string): string {
  return id.includes('#') ? id : `${id}#default`;
}

/**
 * The devnet plugin: embedded upstreams for an offline gateway and for tests. It provides four
 * embedded upstream kinds:
 * - `anvil`: an Anvil child process per instance, seeded with a contract, transactions and logs;
 * - `bor`: the same, chain id 137 by default, behind a shim that answers `bor_getCurrentValidators`;
 * - `litesvm`: an in-process LiteSVM Solana VM behind a JSON-RPC server answering as an agave node;
 * - `helia`: an in-process IPFS node (`@helia/unixfs` over `blockstore-fs`) speaking kubo's HTTP RPC.
 *
 * @example
 * ```ts
 * const dev = devnet({ bulkLogs: 0 });
 * const gateway = await createGateway({
 *   config: { networks: [
 *     { name: 'eth', families: ['evm'], upstreams: [{ embedded: 'anvil' }], options: { chainId: 1 } },
 *     { name: 'polygon', families: ['evm', 'polygon'], upstreams: [{ embedded: 'bor' }] },
 *   ] },
 *   plugins: [httpTransport(), evmFamily(), polygonFamily(), dev],
 * });
 * const seed = dev.getSeed('anvil');
 * ```
 */
export function devnet(options: DevnetOptions = {}): DevnetPlugin {
  const codeSettings: DevnetSettings = { ...readDevnetSettings('devnet()', options, DEVNET_OPTIONS_SCHEMA), ...(options.anvil ? { anvil: options.anvil } : {}) };
  let configSettings: DevnetSettings = {};
  const started = new InstanceTracker<DevnetInstance>();

  const provider = (kind: DevnetKind, defaultChainId: number | undefined): DevnetProvider => ({
    kind,
    start(instance, network) {
      const id = `${kind}#${instance}`;
      let settings: ResolvedDevnetSettings;
      try {
        settings = resolveDevnetSettings(
          [codeSettings, configSettings, readDevnetSettings(`networks["${network.name}"].options`, network.options)],
          defaultChainId,
        );
      } catch (error) {
        return Promise.reject(error as Error);
      }
      return started.track(id, startDevnetInstance(kind, id, settings));
    },
  });
  const providers = [provider('anvil', undefined), provider('bor', 137)] as const;
  const solana = liteSvmProvider(options.litesvm);
  const helia = heliaProvider(options.helia);

  const plugin: DevnetPlugin = {
    name: DEVNET_PLUGIN,
    providers,
    litesvm: solana,
    helia,
    register(container, config: GatewayConfig) {
      configSettings = readDevnetSettings(`plugins.${DEVNET_PLUGIN}`, config.plugins[DEVNET_PLUGIN], DEVNET_SECTION_SCHEMA);
      solana.configure(config.plugins[DEVNET_PLUGIN]);
      for (const p of providers) container.register(Tokens.EmbeddedUpstream, { useValue: p });
      container.register(Tokens.EmbeddedUpstream, { useValue: solana });
      helia.configure(config.plugins[DEVNET_PLUGIN]);
      container.register(Tokens.EmbeddedUpstream, { useValue: helia });
    },
    solanaInstance(id) {
      return solana.instance(id);
    },
    getSolanaSeed(id = 'litesvm') {
      const found = solana.instance(id);
      if (found === undefined) throw new Error(`devnet: no instance "${normalizeId(id)}" was started`);
      return found.getSeed();
    },
    instance(id) {
      return started.get(normalizeId(id));
    },
    instances() {
      return started.all();
    },
    getSeed(id = 'anvil') {
      const found = started.get(normalizeId(id));
      if (found === undefined) throw new Error(`devnet: no instance "${normalizeId(id)}" was started`);
      return found.getSeed();
    },
    async stop() {
      await Promise.allSettled([started.stopAll(), solana.stop(), helia.stop()]);
    },
  };
  return plugin;
}
