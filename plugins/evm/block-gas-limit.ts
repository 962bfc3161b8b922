/**
 * The current block gas limit of a network, learned from its upstreams and cached in the network's
 * state for a few seconds.
 *
 * @module
 */
import type { Clock } from '../../core/plugin-api.js';
import type { NetworkRuntime } from '../../core/family-api.js';

/** The key of the cache in {@link NetworkRuntime.state}. */
export const BLOCK_GAS_LIMIT_STATE_KEY = 'evm.blockGasLimit';

/** Asks the network for the latest block's gas limit; undefined when it cannot be learned (never rejects). */
export async function fetchBlockGasLimit(network: NetworkRuntime): Promise<bigint | undefined> {
  try {
    const block = await network.rpc('eth_getBlockByNumber', ['latest', false]);
    if (typeof block !== 'object' || block === null) return undefined;
    const gasLimit = (block as { gasLimit?: unknown }).gasLimit;
    if (typeof gasLimit !== 'string' || !/^0[xX][0-9a-fA-F]+$/.test(gasLimit)) return undefined;
    const value = BigInt(gasLimit);
    return value > 0n ? value : undefined;
  } catch {
    return undefined;
  }
}

/**
 * One network's cached block gas limit. A value (or the failure to learn one) is reused for the TTL;
 * callers that arrive while it is being fetched share that one fetch.
 */
export class BlockGasLimitCache {
  #value: bigint | undefined;
  #expiresAt = Number.NEGATIVE_INFINITY;
  #pending: Promise<bigint | undefined> | undefined;

  /**
   * The gas limit: synchronously while the cached one is fresh, otherwise a promise of a fresh one.
   * `undefined` means it could not be learned; that outcome is cached for the TTL as well, so an
   * unreachable network is not asked again on every call.
   */
  get(network: NetworkRuntime, ttlMs: number, clock: Clock): bigint | undefined | Promise<bigint | undefined> {
    if (clock.now() < this.#expiresAt) return this.#value;
    if (this.#pending !== undefined) return this.#pending;
    const pending = fetchBlockGasLimit(network).then((value) => {
      this.#value = value;
      this.#expiresAt = clock.now() + ttlMs;
      this.#pending = undefined;
      return value;
    });
    this.#pending = pending;
    return pending;
  }
}

/** The block gas limit of `network`, through the cache kept in its state (created on first use). */
export function blockGasLimit(network: NetworkRuntime, ttlMs: number, clock: Clock): bigint | undefined | Promise<bigint | undefined> {
  let cache = network.state.get(BLOCK_GAS_LIMIT_STATE_KEY);
  if (!(cache instanceof BlockGasLimitCache)) {
    cache = new BlockGasLimitCache();
    network.state.set(BLOCK_GAS_LIMIT_STATE_KEY, cache);
  }
  return (cache as BlockGasLimitCache).get(network, ttlMs, clock);
}
