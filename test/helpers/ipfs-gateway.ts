import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { GatewayConfigInput, NetworkConfig, TollgatePlugin } from '../../core/index.js';
import { ipfs, type IpfsSettings } from '../../plugins/ipfs/index.js';
import { devnet, type DevnetPlugin, type HeliaSettings } from '@tollgate/devnet';
import { startTestGateway, type TestGateway } from './gateway.js';

/** The key every IPFS test uses, its secret, and a key whose plan has no file storage. */
export const IPFS_KEY = 'ipfs-test-key-0001';
export const IPFS_SECRET = 'ipfs-test-secret-0001';
export const NO_STORAGE_KEY = 'ipfs-test-key-core';
export const NO_STORAGE_SECRET = 'ipfs-test-secret-core';
export const NO_SECRET_KEY = 'ipfs-test-key-nosecret';

/** `Authorization: Basic` for `user:password`. */
export function basic(user: string, password: string): string {
  return `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
}

/** A gateway serving the file-storage API at `{origin}/ipfs/api/v0`, with its own temporary data directory. */
export interface IpfsTestGateway extends TestGateway {
  /** `http://127.0.0.1:<port>/ipfs/api/v0` */
  readonly api: string;
  /** The `Authorization` header of {@link IPFS_KEY}. */
  readonly auth: string;
  /** The devnet plugin (its `helia` provider has the embedded node). */
  readonly devnet: DevnetPlugin;
  /** The embedded node's data directory. */
  readonly dataDir: string;
}

/** Options of {@link startIpfsGateway}. */
export interface IpfsGatewayOptions {
  /** Settings of the ipfs plugin (`plugins.ipfs`). */
  readonly ipfs?: IpfsSettings;
  /** Settings of the embedded node. */
  readonly helia?: HeliaSettings;
  /** Upstreams of the `ipfs` network instead of the embedded node. */
  readonly upstreams?: NetworkConfig['upstreams'];
  /** An existing data directory (kept on close); default a fresh temporary one, removed on close. */
  readonly dataDir?: string;
  /** Extra config. */
  readonly config?: Partial<GatewayConfigInput>;
  /** Extra plugins, registered first. */
  readonly plugins?: TollgatePlugin[];
}

/** Starts a gateway with the ipfs plugin and, unless `upstreams` says otherwise, an embedded node. */
export async function startIpfsGateway(options: IpfsGatewayOptions = {}): Promise<IpfsTestGateway> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'tollgate-ipfs-test-'));
  const dev = devnet({ helia: { dataDir, ...options.helia } });
  try {
    const gw = await startTestGateway(
      {
        keys: [
          { key: IPFS_KEY, secret: IPFS_SECRET, plan: 'growth', id: 'ipfs-test' },
          { key: NO_STORAGE_KEY, secret: NO_STORAGE_SECRET, plan: 'core', id: 'ipfs-core' },
          { key: NO_SECRET_KEY, plan: 'growth', id: 'ipfs-nosecret' },
        ],
        networks: [{ name: 'ipfs', families: ['ipfs'], upstreams: options.upstreams ?? [{ name: 'helia', embedded: 'helia' }] }],
        plugins: { ipfs: { ...options.ipfs, plans: { core: false, ...options.ipfs?.plans } } as Record<string, unknown> },
        ...options.config,
      },
      [...(options.plugins ?? []), ipfs(), dev],
    );
    return {
      ...gw,
      api: `${gw.origin}/ipfs/api/v0`,
      auth: basic(IPFS_KEY, IPFS_SECRET),
      devnet: dev,
      dataDir,
      close: async () => {
        await gw.close();
        if (options.dataDir === undefined) rmSync(dataDir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    if (options.dataDir === undefined) rmSync(dataDir, { recursive: true, force: true });
    throw error;
  }
}
