import { resolve } from 'node:path';
import type { EmbeddedUpstreamInstance, EmbeddedUpstreamProvider } from 'tollgate/upstream';
import type { NetworkConfig } from 'tollgate';
import { checkDevnetLayer, NETWORK_OPTIONS_SCHEMA } from './devnet-settings.js';
import type { IpfsNode, IpfsNodeOptions } from './ipfs-node.js';
import { InstanceTracker } from './instance-tracker.js';

/** The environment variable naming the directory under which `helia` instances keep their blocks by default (`<dir>/ipfs/<instance>`; default `.data`). */
export const DATA_DIR_ENV = 'TOLLGATE_DATA_DIR';

/** Settings of a `helia` (embedded IPFS) instance, under `helia` in `devnet({...})`, the config's `plugins.devnet` and a network's `options`. */
export interface HeliaSettings {
  /**
   * Where the instance keeps its blocks (default `.data/ipfs/<instance>` under the working directory, or
   * under `$TOLLGATE_DATA_DIR`); content added there is still there after a restart.
   */
  readonly dataDir?: string;
  /** Whether the node answers `object/get` (default true); `false` answers as kubo 0.28 and later do. */
  readonly objectGet?: boolean;
}

/** A started `helia` instance. */
export interface HeliaInstance extends EmbeddedUpstreamInstance {
  /** `helia#<instance>`. */
  readonly id: string;
  /** The node itself (its blockstore and UnixFS API, for tests and benchmarks). */
  readonly node: IpfsNode;
}

/** The `helia` provider, with the instances it started. */
export interface HeliaProvider extends EmbeddedUpstreamProvider {
  /** Always `helia`. */
  readonly kind: 'helia';
  /** Starts instance `instance` for `network`. */
  start(instance: string, network: NetworkConfig): Promise<HeliaInstance>;
  /** Sets the config's layer of settings (the `plugins.devnet` section; its `helia` member is read). */
  configure(section: Readonly<Record<string, unknown>> | undefined): void;
  /** A started instance by `helia` or `helia#instance`. */
  instance(id?: string): HeliaInstance | undefined;
  /** Stops every instance it started. */
  stop(): Promise<void>;
}

/**
 * Starts an embedded IPFS node: `@helia/unixfs` over a `blockstore-fs` directory (content survives
 * restarts), no libp2p networking, serving kubo's HTTP RPC (`add`, `cat`, `get`, `object/get`, `block/*`,
 * `dag/*`, `version`) on a loopback port, with kubo's `add` defaults (CIDv0, 256 KiB chunks, balanced layout).
 * The node's code and `@helia/unixfs` load on the first call, so a gateway without IPFS never pays for them.
 *
 * @example
 * ```ts
 * const node = await startIpfsNode({ dataDir: '.data/ipfs/default' });
 * const cid = await node.add([new TextEncoder().encode('hello world\n')]); // QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o
 * await node.stop();
 * ```
 */
export async function startIpfsNode(options: IpfsNodeOptions): Promise<IpfsNode> {
  const { startIpfsNode: start } = await import('./ipfs-node.js');
  return start(options);
}

/**
 * Reads the `helia` member of a settings object (`devnet({ helia })`, the config's `plugins.devnet`, a
 * network's `options`), checked with Tollgate's settings validator.
 *
 * @throws ConfigError naming each offending field under `where` (`plugins.devnet.helia.objectGet: must be true or false`).
 */
export function readHeliaSettings(where: string, section: Readonly<Record<string, unknown>> | undefined): HeliaSettings {
  return (checkDevnetLayer(NETWORK_OPTIONS_SCHEMA, where, section).helia ?? {}) as HeliaSettings;
}

/**
 * The `helia` embedded-upstream provider: one embedded IPFS node ({@link startIpfsNode}) per
 * `helia#instance`, on a free loopback port. The node's code (and `@helia/unixfs`) is loaded only when
 * an instance starts. Settings come in layers: `devnet({ helia })`, the config's `plugins.devnet.helia`,
 * then the network's `options.helia`.
 */
export function heliaProvider(codeSettings: HeliaSettings = {}): HeliaProvider {
  const code = readHeliaSettings('devnet()', { helia: codeSettings });
  let fromConfig: HeliaSettings = {};
  const started = new InstanceTracker<HeliaInstance>();
  const normalize = (id: string): string => (id.includes('#') ? id : `${id}#default`);
  return {
    kind: 'helia',
    configure(section) {
      fromConfig = readHeliaSettings('plugins.devnet', section);
    },
    start(instance, network) {
      const id = `helia#${instance}`;
      let settings: HeliaSettings;
      try {
        settings = { ...code, ...fromConfig, ...readHeliaSettings(`networks["${network.name}"].options`, network.options) };
      } catch (error) {
        return Promise.reject(error as Error);
      }
      const starting = startIpfsNode({
        dataDir: resolve(settings.dataDir ?? resolve(process.env[DATA_DIR_ENV] || '.data', 'ipfs', instance)),
        ...(settings.objectGet === undefined ? {} : { objectGet: settings.objectGet }),
      }).then((node): HeliaInstance => ({ id, url: node.url, node, stop: () => node.stop() }));
      return started.track(id, starting);
    },
    instance(id = 'helia') {
      return started.get(normalize(id));
    },
    stop() {
      return started.stopAll();
    },
  };
}
