/**
 * The gas cap of `eth_call` and `eth_estimateGas`: a `gas` above a multiple of the current block gas
 * limit is lowered to that cap, as geth's `--rpc.gascap` does, rather than refused.
 *
 * @module
 */
import type { Clock, MaybePromise } from '../../core/plugin-api.js';
import type { LimitsInput } from '../../core/family-api.js';
import { blockGasLimit } from './block-gas-limit.js';

/** What `gasCap` needs. */
export interface GasCapSettings {
  /** The cap, in percent of the block gas limit (1000 = 10 times). */
  readonly percent: number;
  /** How long a learned block gas limit is reused, in milliseconds. */
  readonly ttlMs: number;
  /** Time source of the cache. */
  readonly clock: Clock;
}

const QUANTITY = /^0[xX][0-9a-fA-F]+$/;

/** The `gas` a call asks for (first parameter's `gas`, a hex quantity), or undefined when it sets none. */
export function requestedGas(params: unknown): bigint | undefined {
  if (!Array.isArray(params)) return undefined;
  const call: unknown = params[0];
  if (typeof call !== 'object' || call === null) return undefined;
  const gas = (call as { gas?: unknown }).gas;
  return typeof gas === 'string' && QUANTITY.test(gas) ? BigInt(gas) : undefined;
}

/** The cap for a block gas limit: `percent` of it, rounded down. */
export function gasCapFor(blockGasLimit: bigint, percent: number): bigint {
  return (blockGasLimit * BigInt(percent)) / 100n;
}

/**
 * `params` with the call's `gas` lowered to `cap` when it is above it (a new array and call object;
 * the client's are not touched), or undefined when the call is within the cap.
 */
export function capGas(params: unknown, cap: bigint): unknown[] | undefined {
  const gas = requestedGas(params);
  if (gas === undefined || gas <= cap) return undefined;
  const [call, ...rest] = params as unknown[];
  return [{ ...(call as Record<string, unknown>), gas: `0x${cap.toString(16)}` }, ...rest];
}

/**
 * The `limits` hook of `eth_call` and `eth_estimateGas`. Calls without a `gas` field pass at once; for
 * the others the current block gas limit is learned (cached per network for `ttlMs`) and a `gas` above
 * the cap is lowered to it, which makes the core re-encode the call. When the gas limit cannot be
 * learned the call goes unchanged: the node applies its own cap.
 */
export function gasCap(settings: GasCapSettings): (input: LimitsInput) => MaybePromise<unknown[] | undefined> {
  const { percent, ttlMs, clock } = settings;
  return ({ params, network }) => {
    if (requestedGas(params) === undefined) return undefined;
    const apply = (limit: bigint | undefined): unknown[] | undefined => (limit === undefined ? undefined : capGas(params, gasCapFor(limit, percent)));
    const limit = blockGasLimit(network, ttlMs, clock);
    return limit instanceof Promise ? limit.then(apply) : apply(limit);
  };
}
