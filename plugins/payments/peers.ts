import { importPeer } from '../../core/plugin-api.js';

// x402 and viem are optional peer dependencies of tollgate: only a gateway that sells credits for x402
// installs them. Loading them here, with top-level await, turns a missing one into an error that names
// the package when the plugin is imported (a static import would fail at link time with Node's message).

const NEEDED_BY = 'tollgate/plugins/payments';

/** `@x402/core/http`: the header codecs and the HTTP facilitator client. */
export const x402Http: typeof import('@x402/core/http') = await importPeer('@x402/core', () => import('@x402/core/http'), NEEDED_BY);
/** `@x402/core/facilitator`: the facilitator that routes a payment to its scheme. */
export const x402Facilitator: typeof import('@x402/core/facilitator') = await importPeer('@x402/core', () => import('@x402/core/facilitator'), NEEDED_BY);
/** `@x402/evm`: the facilitator signer adapter. */
export const x402Evm: typeof import('@x402/evm') = await importPeer('@x402/evm', () => import('@x402/evm'), NEEDED_BY);
/** `@x402/evm/exact/facilitator`: the exact scheme's facilitator (EIP-3009 and Permit2). */
export const x402EvmFacilitator: typeof import('@x402/evm/exact/facilitator') = await importPeer('@x402/evm', () => import('@x402/evm/exact/facilitator'), NEEDED_BY);
/** `viem`: the settlement account and the JSON-RPC client the embedded facilitator sends through. */
export const viem: typeof import('viem') = await importPeer('viem', () => import('viem'), NEEDED_BY);
/** `viem/accounts`: the settlement key as an account. */
export const viemAccounts: typeof import('viem/accounts') = await importPeer('viem', () => import('viem/accounts'), NEEDED_BY);
