import type { Hex } from './abi-words.js';
import type { AbiItem } from './seed-contract-artifact.js';

/** A contract compiled ahead of time (by `compile-stablecoin.ts`): ABI, bytecode and selectors. */
export interface CompiledContract {
  /** Contract name. */
  readonly name: string;
  /** The compiler that built it. */
  readonly compiler: string;
  /** The EVM version it targets. */
  readonly evmVersion: string;
  /** Its ABI. */
  readonly abi: readonly AbiItem[];
  /** Creation bytecode (what a deployment sends). */
  readonly bytecode: Hex;
  /** Runtime bytecode (what `eth_getCode` returns once deployed, immutables aside). */
  readonly deployedBytecode: Hex;
  /** Function selectors by full signature, e.g. `balanceOf(address)`: overloaded functions keep apart. */
  readonly selectors: Readonly<Record<string, Hex>>;
}
