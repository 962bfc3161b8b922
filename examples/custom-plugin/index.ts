/**
 * `tollgate-plugin-geth-extras`: a Tollgate plugin written against the public API only.
 *
 * - {@link gethExtrasFamily}: a network family for Geth's `txpool_*` methods and `web3_sha3`.
 *
 * @packageDocumentation
 */
export { gethExtrasFamily, createGethExtrasFamily, GETH_EXTRAS_FAMILY, GETH_EXTRAS_METHODS } from './geth-extras.js';
