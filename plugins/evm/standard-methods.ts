/**
 * The `eth_` methods of the execution-apis specification beyond those of `methods.ts`: the state
 * proofs and multi-slot reads, simulation, fee and capability queries a read gateway forwards, and the
 * signing methods it refuses (with the reason). The polling filters are in `filters/` (the gateway
 * serves them itself).
 *
 * @module
 */
import type { MethodDefinition } from '../../core/family-api.js';
import { callObject } from './call-object.js';
import { address, blockId, noParams, positional, storageSlot } from './schemas.js';

/** `eth_getProof`'s storage keys: an array of slots, as geth reads them (hex, at most 32 bytes). */
const storageKeys = { type: 'array', items: storageSlot } as const;

/** `eth_getStorageValues`' request: slots by address (the node checks the request is not empty). */
const slotsByAddress = {
  type: 'object',
  propertyNames: address,
  additionalProperties: storageKeys,
  description: 'an object of storage slot arrays keyed by address',
} as const;

/**
 * `eth_simulateV1`'s payload: `blockStateCalls` is required; each block's overrides and calls, and
 * the flags (`validation`, `traceTransfers`, `returnFullTransactions`), are checked by the node, whose
 * error codes (-38xxx) the spec defines and clients read.
 */
const simulationPayload = {
  type: 'object',
  required: ['blockStateCalls'],
  properties: {
    blockStateCalls: { type: 'array', items: { type: 'object' } },
    validation: { type: ['boolean', 'null'] },
    traceTransfers: { type: ['boolean', 'null'] },
    returnFullTransactions: { type: ['boolean', 'null'] },
  },
} as const;

/** Why a shared gateway does not serve the signing methods: it holds no one's keys. */
const NO_KEYS = 'a shared gateway holds no private keys and signs nothing; sign in the client (a wallet, viem or ethers with a local account) and send the signed transaction with eth_sendRawTransaction';

/** The `eth_` methods of the specification that the gateway forwards to the network's nodes. */
export const EVM_STANDARD_METHODS: readonly MethodDefinition[] = [
  {
    name: 'eth_getProof',
    params: positional([address, storageKeys, blockId], 2),
    paramNames: ['address', 'storageKeys', 'block'],
    credits: 150,
    failover: false,
    idempotent: true,
    description: 'The Merkle proof of an account and some of its storage slots (EIP-1186).',
  },
  {
    name: 'eth_getStorageValues',
    params: positional([slotsByAddress, blockId], 1),
    paramNames: ['slots', 'block'],
    credits: 150,
    failover: false,
    idempotent: true,
    description: 'The values of several storage slots of several accounts, in one call.',
  },
  {
    name: 'eth_simulateV1',
    params: positional([simulationPayload, blockId], 1),
    paramNames: ['payload', 'block'],
    credits: 300,
    failover: false,
    idempotent: true,
    description: 'Simulates a chain of blocks of calls with state and block overrides (viem `simulateCalls`).',
  },
  {
    name: 'eth_fillTransaction',
    params: positional([callObject()], 1),
    paramNames: ['transaction'],
    credits: 80,
    failover: false,
    idempotent: true,
    description: 'Fills in the defaults of an unsigned transaction (nonce, gas, fees) and returns it with its RLP encoding; nothing is signed.',
  },
  {
    name: 'eth_baseFee',
    params: noParams,
    paramNames: [],
    credits: 80,
    failover: false,
    idempotent: true,
    description: 'The base fee of the next block, in wei.',
  },
  {
    name: 'eth_blobBaseFee',
    params: noParams,
    paramNames: [],
    credits: 80,
    failover: false,
    idempotent: true,
    description: 'The blob base fee of the next block (EIP-4844), in wei.',
  },
  {
    name: 'eth_config',
    params: noParams,
    paramNames: [],
    credits: 5,
    failover: false,
    idempotent: true,
    description: "The node's fork configuration: the current, next and last forks (EIP-7910).",
  },
  {
    name: 'eth_capabilities',
    params: noParams,
    paramNames: [],
    credits: 5,
    failover: false,
    idempotent: true,
    description: 'Which history the node serves (state, transactions, logs, receipts, blocks) and from which block.',
  },
  {
    name: 'eth_getBlockAccessList',
    params: positional([blockId], 1),
    paramNames: ['block'],
    credits: 150,
    failover: false,
    idempotent: true,
    description: 'The block-level access list of a block (EIP-7928).',
  },
  // --- Refused: they need the node's own accounts ----------------------------------------------
  { name: 'eth_sign', params: {}, credits: 0, refused: NO_KEYS, description: 'Refused: signing needs keys a shared gateway does not hold.' },
  { name: 'eth_signTransaction', params: {}, credits: 0, refused: NO_KEYS, description: 'Refused: signing needs keys a shared gateway does not hold.' },
  { name: 'eth_sendTransaction', params: {}, credits: 0, refused: NO_KEYS, description: 'Refused: signing needs keys a shared gateway does not hold; send a signed transaction with eth_sendRawTransaction.' },
  // Signing with the node's keys, and a development node's send without any signature: in the eth_
  // namespace, so refused here, where a forward policy listing `eth` cannot reach them.
  ...['eth_signTypedData', 'eth_signTypedData_v3', 'eth_signTypedData_v4'].map((name) => ({ name, params: {}, credits: 0, refused: NO_KEYS, description: 'Refused: signing needs keys a shared gateway does not hold.' })),
  {
    name: 'eth_sendUnsignedTransaction',
    params: {},
    credits: 0,
    refused: 'a transaction without a signature moves funds of an account whose key the sender need not hold; sign it in the client and send it with eth_sendRawTransaction',
    description: 'Refused: a development node\'s send without a signature.',
  },
  {
    name: 'eth_accounts',
    params: {},
    credits: 0,
    refused: 'a shared gateway holds no accounts (a node\'s own accounts are not the client\'s); use the accounts of your wallet or local signer',
    description: 'Refused: the node\'s accounts are not the client\'s.',
  },
  {
    name: 'eth_coinbase',
    params: {},
    credits: 0,
    refused: 'the address a node mines to is that node\'s own setting and differs between the nodes behind the gateway',
    description: 'Refused: a node\'s own setting, not the chain\'s.',
  },
];
