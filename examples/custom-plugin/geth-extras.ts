/**
 * The `geth-extras` network family: the methods of Geth's JSON-RPC API beyond `eth_` that Tollgate's evm
 * family leaves out, namely the mempool (`txpool_status`, `txpool_inspect`, `txpool_content`) and
 * `web3_sha3`. Geth and the nodes that follow its API (Bor, Anvil...) answer them whatever the chain, so
 * the family is added next to `evm` on a network: `families: [evm, geth-extras]`.
 *
 * @module
 */
import { Tokens, type JsonSchema } from 'tollgate/plugin';
import type { MethodDefinition, NetworkFamily } from 'tollgate/family';
import { type TollgatePlugin } from 'tollgate';

/** The family's name, as networks reference it in the config. */
export const GETH_EXTRAS_FAMILY = 'geth-extras';

/** No parameters: `[]`, or no `params` member at all (validated as `[]`). */
const noParams: JsonSchema = { type: 'array', maxItems: 0 };

/** `web3_sha3`'s one parameter: hex-encoded bytes, as Geth's `hexutil.Bytes` accepts them. */
const hexData: JsonSchema = { type: 'string', pattern: '^0[xX]([0-9a-fA-F]{2})*$', description: 'hex data (0x followed by an even number of hex digits)' };

/**
 * The family's methods. Credits follow the size of the answer: a pair of counters, a line per pending
 * transaction, a whole transaction object per pending transaction. Mempool reads do not fail over to a
 * partner provider: another provider's mempool is a different answer, not the same one served elsewhere.
 */
export const GETH_EXTRAS_METHODS: readonly MethodDefinition[] = [
  {
    name: 'txpool_status',
    params: noParams,
    paramNames: [],
    credits: 20,
    failover: false,
    idempotent: true,
    description: 'How many transactions the node holds, pending (executable) and queued (waiting for a nonce gap to close).',
  },
  {
    name: 'txpool_inspect',
    params: noParams,
    paramNames: [],
    credits: 120,
    failover: false,
    idempotent: true,
    description: 'Every transaction in the mempool as one line (to, value, gas, gas price), grouped by sender and nonce.',
  },
  {
    name: 'txpool_content',
    params: noParams,
    paramNames: [],
    credits: 250,
    failover: false,
    idempotent: true,
    description: 'Every transaction in the mempool as a full transaction object, grouped by sender and nonce.',
  },
  {
    name: 'web3_sha3',
    params: { type: 'array', prefixItems: [hexData], minItems: 1, items: false },
    paramNames: ['data'],
    credits: 10,
    failover: true,
    idempotent: true,
    description: 'The Keccak-256 hash of the given bytes, computed by the node.',
  },
];

/** The `geth-extras` {@link NetworkFamily}. It has no health probe of its own: the `evm` family's serves. */
export function createGethExtrasFamily(): NetworkFamily {
  return { name: GETH_EXTRAS_FAMILY, methods: GETH_EXTRAS_METHODS };
}

/**
 * The `geth-extras` family as a plugin.
 *
 * @example
 * ```ts
 * const gateway = await createGateway({
 *   config: { networks: [{ name: 'eth', families: ['evm', 'geth-extras'], upstreams: [{ url: 'http://127.0.0.1:8545' }] }] },
 *   plugins: [httpTransport(), evmFamily(), gethExtrasFamily()],
 * });
 * ```
 */
export function gethExtrasFamily(): TollgatePlugin {
  return {
    name: GETH_EXTRAS_FAMILY,
    register(container) {
      container.register(Tokens.Family, { useValue: createGethExtrasFamily() });
    },
  };
}
