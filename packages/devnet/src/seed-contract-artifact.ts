import type { Hex } from './abi-words.js';

/** One parameter of an ABI entry. */
export interface AbiParameter {
  /** Parameter name (may be empty). */
  readonly name: string;
  /** ABI type, e.g. `uint256`. */
  readonly type: string;
  /** Solidity's own type name. */
  readonly internalType?: string;
  /** For event parameters: whether it is a topic. */
  readonly indexed?: boolean;
  /** For a tuple (a struct): its members. */
  readonly components?: readonly AbiParameter[];
}

/** One entry of a contract ABI (function, event, error, constructor). */
export interface AbiItem {
  /** `function`, `event`, `error`, `constructor`... */
  readonly type: string;
  /** Its name (none for a constructor). */
  readonly name?: string;
  /** Its parameters. */
  readonly inputs?: readonly AbiParameter[];
  /** A function's return values. */
  readonly outputs?: readonly AbiParameter[];
  /** A function's mutability: `pure`, `view`, `nonpayable`, `payable`. */
  readonly stateMutability?: string;
  /** For events: whether it is anonymous (no topic 0). */
  readonly anonymous?: boolean;
}

/** The 4-byte selectors of the seed contract's functions, by function name. */
export interface SeedContractSelectors {
  /** `deny(uint256)`: reverts with `Denied(msg.sender, code)`. */
  readonly deny: Hex;
  /** `fail(bool)`: reverts with the reason string when true, returns true otherwise. */
  readonly fail: Hex;
  /** `gasLeft()`: returns `gasleft()`. */
  readonly gasLeft: Hex;
  /** `panic()`: reverts with `Panic(0x01)`. */
  readonly panic: Hex;
  /** `ping(uint256,bytes32)`: emits that many `Ping` events. */
  readonly ping: Hex;
  /** `pings()`: the number of `Ping` events so far. */
  readonly pings: Hex;
}

/** What every contract compiled ahead of time carries (the seed contract, the stablecoin). */
export interface ContractBuild {
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
}

/** The seed contract, compiled: what `compile-seed-contract.ts` writes into `seed-contract.ts`. */
export interface SeedContractArtifact extends ContractBuild {
  /** Function selectors by name. */
  readonly selectors: SeedContractSelectors;
  /** Topic 0 of `Ping(address,uint256,bytes32)`. */
  readonly pingTopic: Hex;
  /** Selector of the custom error `Denied(address,uint256)`. */
  readonly deniedSelector: Hex;
}
