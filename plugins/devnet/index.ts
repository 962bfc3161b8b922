/**
 * The devnet plugin: embedded, offline EVM upstreams for the example gateway, tests and benchmarks.
 * `devnet()` provides the embedded upstream kinds `anvil` (a seeded Anvil child process) and `bor` (the
 * same behind a shim answering `bor_getCurrentValidators`). The building blocks are exported too.
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
export type { SeedContractArtifact, SeedContractSelectors, AbiItem, AbiParameter } from './seed-contract-artifact.js';
export { SEED_CONTRACT } from './seed-contract.js';
export { startBorServer, type BorServer, type BorServerOptions } from './bor-server.js';
export { borValidators, type BorValidator, type BorSignerInput, type BorSignerConfig } from './bor-validators.js';
export { BOR_VALIDATORS_METHOD } from './bor-answer.js';
export { JsonRpcClient, JsonRpcCallError } from './json-rpc-client.js';
export { abiWord, bytes32, encodeCall, encodeErrorString, encodePanic, quantity, type Address, type Hex } from './abi-words.js';
