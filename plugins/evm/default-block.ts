/**
 * The default block of the state reads: the execution-apis spec and geth let clients leave the block
 * parameter out (read as `latest`), but not every node does (anvil refuses `[address]` alone), so the
 * gateway fills it in before the call leaves, and every upstream sees the same, complete request.
 *
 * @module
 */
import type { MaybePromise } from '../../core/plugin-api.js';
import type { LimitsInput } from '../../core/family-api.js';

/** The tag a missing block parameter stands for. */
export const DEFAULT_BLOCK = 'latest';

/** Where each method with an optional block parameter takes it (its position in `params`). */
export const OPTIONAL_BLOCK_POSITION: Readonly<Record<string, number>> = Object.freeze({
  eth_call: 1,
  eth_createAccessList: 1,
  eth_getBalance: 1,
  eth_getCode: 1,
  eth_getStorageAt: 2,
  eth_getTransactionCount: 1,
});

/**
 * `params` with `latest` appended when the block parameter at `position` is missing (a new array; the
 * client's is not touched), or undefined when the client gave one.
 */
export function withDefaultBlock(params: unknown, position: number): unknown[] | undefined {
  return Array.isArray(params) && params.length === position ? [...params, DEFAULT_BLOCK] : undefined;
}

/** A `limits` hook that fills in the block at `position`, then hands the params to `next`, if any. */
export function defaultBlock(position: number, next?: (input: LimitsInput) => MaybePromise<unknown>): (input: LimitsInput) => MaybePromise<unknown> {
  return (input) => {
    const filled = withDefaultBlock(input.params, position);
    if (next === undefined) return filled;
    const params = filled ?? input.params;
    const rewritten = next({ ...input, params });
    const settle = (out: unknown): unknown => out ?? filled;
    return rewritten instanceof Promise ? rewritten.then(settle) : settle(rewritten);
  };
}
