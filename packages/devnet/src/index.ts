/**
 * The devnet plugin: embedded, offline upstreams for the example gateway, tests and benchmarks.
 * `devnet()` provides the embedded upstream kinds `anvil` (a seeded Anvil child process), `bor` (the
 * same behind a shim answering `bor_getCurrentValidators`), `litesvm` (an in-process Solana VM
 * behind a JSON-RPC server answering as an agave node) and `helia` (an in-process IPFS node speaking
 * kubo's HTTP RPC, for the file-storage API). The building blocks are exported too.
 *
 * @packageDocumentation
 */
export { devnet, DEVNET_PLUGIN, type DevnetOptions, type DevnetPlugin, type DevnetProvider } from './devnet-plugin.js';
export type { DevnetInstance, DevnetKind } from './devnet-instance.js';
export type { DevnetSettings } from './devnet-settings.js';
export { startAnvil, anvilArgs, AnvilStartError, type AnvilOptions, type AnvilInstance } from './anvil-process.js';
export { resolveAnvilBinary, anvilPlatformPackage, ANVIL_BINARY_ENV } from './anvil-binary.js';
export { freePort } from './free-port.js';
export { seedDevnet, SEED_REVERT_REASON } from './seed.js';
export type { DevnetSeed, SeedOptions, SeededTransaction, SeededLogs, SeededRevert } from './seed-types.js';
export type { ContractBuild, SeedContractArtifact, SeedContractSelectors, AbiItem, AbiParameter } from './seed-contract-artifact.js';
export { SEED_CONTRACT } from './seed-contract.js';
export { seedStablecoin, DEVNET_PAYER_KEY, DEVNET_PAYER_ADDRESS, DEVNET_PAYER_FUNDS, MULTICALL3_ADDRESS, type DevnetStablecoin, type StablecoinSender } from './stablecoin.js';
export { STABLECOIN_CONTRACT, MULTICALL_CONTRACT } from './stablecoin-contract.js';
export type { CompiledContract } from './compiled-contract.js';
export { startBorServer, type BorServer, type BorServerOptions } from './bor-server.js';
export { borValidators, type BorValidator, type BorSignerInput, type BorSignerConfig } from './bor-validators.js';
export { BOR_VALIDATORS_METHOD } from './bor-answer.js';
export { JsonRpcClient, JsonRpcCallError } from './json-rpc-client.js';
export { abiWord, bytes32, encodeCall, encodeErrorString, encodePanic, quantity, type Address, type Hex } from './abi-words.js';
export { liteSvmProvider, type LiteSvmProvider } from './solana/provider.js';
export { startLiteSvmInstance, readLiteSvmSettings, type LiteSvmInstance, type LiteSvmSettings } from './solana/instance.js';
export { LiteSvmNode, LITESVM_NODE_VERSION, RENT_EXEMPT_EPOCH, SYSTEM_PROGRAM_ID, type LiteSvmNodeOptions, type NodeAccount, type AccountInput, type Commitment, type NodeEvents as SolanaNodeEvents } from './solana/litesvm-node.js';
export { startLiteSvmServer, type LiteSvmServer, type LiteSvmServerOptions } from './solana/rpc-server.js';
export { type PubsubService } from './solana/pubsub/pubsub-server.js';
export { SUBSCRIPTION_KINDS as SOLANA_SUBSCRIPTION_KINDS } from './solana/pubsub/kinds.js';
export { type Ledger as SolanaLedger, type TransactionRecord as SolanaTransactionRecord } from './solana/ledger/ledger.js';
export { SOLANA_NODE_METHODS, type Method as SolanaNodeMethod, type MethodContext as SolanaNodeMethodContext } from './solana/rpc-methods.js';
export { encodeAccount, sliceData, MAX_BASE58_BYTES, type AccountEncoding, type DataSlice } from './solana/account-encoding.js';
export { parseAccountData, type ParsedAccount, type ParseContext } from './solana/parsers/parse-account.js';
export { seedSolana, seedAddress, mintData, tokenAccountData, nonceData, MEMO_PROGRAM_ID, type SolanaSeed, type SeededAccount } from './solana/seed.js';
export { RpcError as SolanaRpcError } from './solana/rpc-error.js';
export { jsonText, rustF64, RawJson } from './solana/json-text.js';
export { heliaProvider, readHeliaSettings, startIpfsNode, DATA_DIR_ENV, type HeliaProvider, type HeliaInstance, type HeliaSettings } from './ipfs-provider.js';
export type { IpfsNode, IpfsNodeOptions } from './ipfs-node.js';
