import type { Hex } from './abi-words.js';
import type { ContractBuild } from './seed-contract-artifact.js';

/** A contract compiled ahead of time (by `compile-stablecoin.ts`): its build and its selectors. */
export interface CompiledContract extends ContractBuild {
  /** Function selectors by full signature, e.g. `balanceOf(address)`: overloaded functions keep apart. */
  readonly selectors: Readonly<Record<string, Hex>>;
}
