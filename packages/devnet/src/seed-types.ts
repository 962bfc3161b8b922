import type { Address, Hex } from './abi-words.js';
import type { SeedContractArtifact } from './seed-contract-artifact.js';
import type { DevnetStablecoin } from './stablecoin.js';

/** One transaction the seed sent, as its receipt reports it. */
export interface SeededTransaction {
  /** Transaction hash. */
  readonly hash: Hex;
  /** Transaction type: `0x0` legacy, `0x1` EIP-2930 access list, `0x2` EIP-1559. */
  readonly type: Hex;
  /** Sender. */
  readonly from: Address;
  /** Recipient (`null` for the deployment). */
  readonly to: Address | null;
  /** Number of the block it is in. */
  readonly blockNumber: number;
  /** Hash of the block it is in. */
  readonly blockHash: Hex;
  /** Its index in that block. */
  readonly index: number;
  /** Gas it used. */
  readonly gasUsed: number;
  /** How many logs it emitted. */
  readonly logs: number;
}

/** A group of `Ping` logs the seed produced. */
export interface SeededLogs {
  /** How many logs. */
  readonly count: number;
  /** First block holding one of them. */
  readonly fromBlock: number;
  /** Last block holding one of them. */
  readonly toBlock: number;
  /** The transactions that emitted them. */
  readonly transactions: readonly SeededTransaction[];
}

/** An `eth_call` that reverts, with what the node answers. */
export interface SeededRevert {
  /** Calldata for the seed contract that reverts. */
  readonly call: Hex;
  /** The ABI-encoded revert payload, the error's `data`. */
  readonly data: Hex;
}

/**
 * What the devnet seeded at startup: every hash, block and address a test needs to find real data with
 * eth_getLogs, eth_getTransactionByHash, receipts, eth_getTransactionByBlockNumberAndIndex,
 * eth_getBlockByNumber and eth_call.
 *
 * Blocks (with automine, the default): 1 deploys the contract; 2 holds an EIP-1559 transfer, a legacy
 * transfer and an EIP-2930 access-list call, in that order; 3 holds two `ping` calls from two accounts
 * (3 + 2 = 5 `Ping` logs); then, if asked for, the bulk `ping` blocks.
 */
export interface DevnetSeed {
  /** The chain id. */
  readonly chainId: number;
  /** The node's unlocked dev accounts (the default bor signers). */
  readonly accounts: readonly Address[];
  /** The block gas limit of the latest block. */
  readonly blockGasLimit: number;
  /** The deployed seed contract. */
  readonly contract: {
    /** Its address. */
    readonly address: Address;
    /** ABI, bytecode, selectors, `Ping` topic. */
    readonly artifact: SeedContractArtifact;
  };
  /** The seeded transactions, by role. */
  readonly transactions: {
    /** Block 1: the contract's deployment (EIP-1559). */
    readonly deploy: SeededTransaction;
    /** Block 2, index 0: 1 ether from account 0 to account 1 (EIP-1559, type 0x2). */
    readonly eip1559Transfer: SeededTransaction;
    /** Block 2, index 1: 0.5 ether from account 1 to account 2 (legacy, type 0x0). */
    readonly legacyTransfer: SeededTransaction;
    /** Block 2, index 2: a `pings()` call from account 2 with an access list (EIP-2930, type 0x1). */
    readonly accessList: SeededTransaction;
    /** Block 3, index 0: `ping(3, "tollgate-seed")` from account 0: 3 logs. */
    readonly ping: SeededTransaction;
    /** Block 3, index 1: `ping(2, "tollgate-seed-b")` from account 3: 2 logs. */
    readonly pingOther: SeededTransaction;
  };
  /** The 5 `Ping` logs of block 3. */
  readonly logs: SeededLogs;
  /** The bulk `Ping` logs asked for with `bulkLogs` (absent when none were). */
  readonly bulkLogs: SeededLogs | undefined;
  /** Every `Ping` log the contract emitted (the seed's and the bulk ones). */
  readonly totalLogs: number;
  /** The tags (bytes32) of the seeded pings. */
  readonly tags: {
    /** `bytes32("tollgate-seed")`, the data of the 3 logs of `transactions.ping`. */
    readonly ping: Hex;
    /** `bytes32("tollgate-seed-b")`, the data of the 2 logs of `transactions.pingOther`. */
    readonly pingOther: Hex;
    /** `bytes32("tollgate-bulk")`, the data of the bulk logs. */
    readonly bulk: Hex;
  };
  /** `fail(true)`: reverts with `Error(reason)`; the node answers `{code: 3, message: "execution reverted: " + reason, data}`. */
  readonly revert: SeededRevert & {
    /** The reason string. */
    readonly reason: string;
    /** The message the node answers: `execution reverted: <reason>`. */
    readonly message: string;
  };
  /** `panic()`: reverts with `Panic(0x01)` (a failed assertion). */
  readonly panic: SeededRevert & {
    /** The panic code. */
    readonly code: number;
  };
  /** `deny(7)` called without `from`: reverts with the custom error `Denied(0x0…0, 7)`. */
  readonly customError: SeededRevert;
  /** Calldata of calls that succeed. */
  readonly calls: {
    /** `gasLeft()`: returns the gas left at entry, about the call's `gas` minus ~21,200. */
    readonly gasLeft: Hex;
    /** `pings()`: the number of `Ping` logs so far. */
    readonly pings: Hex;
    /** `fail(false)`: returns true. */
    readonly succeed: Hex;
  };
  /**
   * The test stablecoin (EIP-3009, 6 decimals) and its funded demo payer, deployed in two blocks after
   * the bulk logs when seeding with `stablecoin: true`; `undefined` otherwise.
   */
  readonly stablecoin: DevnetStablecoin | undefined;
  /** The latest block once seeding finished. */
  readonly latestBlock: number;
}

/** How much to seed. */
export interface SeedOptions {
  /**
   * Extra `Ping` logs to emit after the regular seed, in their own blocks (default 0). Use more than
   * 10,000 to exercise an eth_getLogs result limit; a full-range eth_getLogs then returns them all.
   */
  readonly bulkLogs?: number;
  /** Most `Ping` logs per bulk transaction (default 5,000: about 9.5 M gas). */
  readonly logsPerTransaction?: number;
  /**
   * Deploy the test stablecoin and fund the demo x402 payer (default false: its deployment and mint add
   * blocks and a `Transfer` log that a chain seeded for other tests does not expect).
   */
  readonly stablecoin?: boolean;
}
