import type { EmbeddedUpstreamInstance } from 'tollgate/upstream';
import { startAnvil, type AnvilInstance } from './anvil-process.js';
import { startBorServer, type BorServer } from './bor-server.js';
import type { ResolvedDevnetSettings } from './devnet-settings.js';
import { seedDevnet } from './seed.js';
import type { DevnetSeed } from './seed-types.js';

/** The kinds of embedded upstream the devnet provides. */
export type DevnetKind = 'anvil' | 'bor';

/** A started devnet upstream: an Anvil (seeded), with the bor shim in front for kind `bor`. */
export interface DevnetInstance extends EmbeddedUpstreamInstance {
  /** `kind#instance`, e.g. `anvil#default`, `bor#default`, `anvil#b`. */
  readonly id: string;
  /** `anvil` or `bor`. */
  readonly kind: DevnetKind;
  /** The URL the gateway uses: Anvil's for `anvil`, the bor shim's for `bor`. */
  readonly url: string;
  /** The WebSocket URL the gateway uses: Anvil's for `anvil`, the bor shim's (relaying to Anvil's) for `bor`. */
  readonly wsUrl: string;
  /** The chain id. */
  readonly chainId: number;
  /** The Anvil process behind it. */
  readonly anvil: AnvilInstance;
  /** The bor shim (kind `bor` only). */
  readonly bor: BorServer | undefined;
  /** What was seeded (`undefined` when seeding is off). */
  readonly seed: DevnetSeed | undefined;
  /**
   * What was seeded.
   *
   * @throws Error when this instance was started with `seed: false`.
   */
  getSeed(): DevnetSeed;
  /** Stops the shim and Anvil; resolves once the process is gone. Idempotent. */
  stop(): Promise<void>;
}

/**
 * Starts one devnet instance: Anvil, then the seed, then (for `bor`) the shim. An integer `blockTime` is
 * switched on only after seeding (`evm_setIntervalMining`), so the seeded blocks are laid out the same
 * in every mode. Whatever started is stopped again if a later step fails.
 */
export async function startDevnetInstance(kind: DevnetKind, id: string, settings: ResolvedDevnetSettings): Promise<DevnetInstance> {
  const interval = settings.anvil.blockTime;
  const deferInterval = interval !== undefined && Number.isInteger(interval) && settings.seed !== false;
  const anvil = await startAnvil({ ...settings.anvil, blockTime: deferInterval ? undefined : interval });
  let bor: BorServer | undefined;
  try {
    const seed = settings.seed === false ? undefined : await seedDevnet(anvil.url, settings.seed);
    if (deferInterval) await anvil.rpc('evm_setIntervalMining', [interval]);
    if (kind === 'bor') bor = await startBorServer({ upstream: anvil.url, wsUpstream: anvil.wsUrl, signers: settings.signers ?? seed?.accounts });
    let stopping: Promise<void> | undefined;
    const shim = bor;
    return {
      id,
      kind,
      url: shim?.url ?? anvil.url,
      wsUrl: shim?.wsUrl ?? anvil.wsUrl,
      chainId: anvil.chainId,
      anvil,
      bor: shim,
      seed,
      getSeed() {
        if (seed === undefined) throw new Error(`devnet ${id} was started with seed: false`);
        return seed;
      },
      stop() {
        stopping ??= (async () => {
          await shim?.stop();
          await anvil.stop();
        })();
        return stopping;
      },
    };
  } catch (error) {
    await bor?.stop();
    await anvil.stop();
    throw error;
  }
}
