/**
 * The `polygon` network family: the Polygon PoS (Bor) methods a Polygon network offers on top of the
 * evm family. A network combines both in the config: `families: [evm, polygon]`.
 *
 * @packageDocumentation
 */
import { Tokens, type TollgatePlugin } from '../../core/plugin-api.js';
import { CachePoliciesToken, type NetworkFamily, type FamilyCachePolicies } from '../../core/family-api.js';
import { POLYGON_METHODS } from './methods.js';

export { POLYGON_METHODS } from './methods.js';

/** The name of the family, as networks reference it in the config. */
export const POLYGON_FAMILY_NAME = 'polygon';

/**
 * The polygon family: `bor_getCurrentValidators`. It has no health probe of its own; a Polygon
 * network also uses the evm family, whose probe (`eth_blockNumber`) serves for both.
 */
export function createPolygonFamily(): NetworkFamily {
  return { name: POLYGON_FAMILY_NAME, methods: POLYGON_METHODS };
}

/**
 * The polygon family's response-cache policies: the validator set changes with the chain, so it is kept
 * until the head moves. The network's evm family supplies the head.
 */
export const POLYGON_CACHE_POLICIES: FamilyCachePolicies = {
  family: POLYGON_FAMILY_NAME,
  methods: { bor_getCurrentValidators: { scope: () => ({ scope: 'head' }) } },
};

/**
 * The polygon family as a plugin: registers the `polygon` {@link NetworkFamily} and its
 * response-cache policies.
 *
 * @example
 * ```ts
 * const gateway = await createGateway({
 *   config: { networks: [{ name: 'polygon', families: ['evm', 'polygon'], upstreams: [{ url: 'http://127.0.0.1:8545' }] }] },
 *   plugins: [httpTransport(), evmFamily(), polygonFamily()],
 * });
 * ```
 */
export function polygonFamily(): TollgatePlugin {
  return {
    name: POLYGON_FAMILY_NAME,
    register(container) {
      container.register(Tokens.Family, { useValue: createPolygonFamily() });
      container.register(CachePoliciesToken, { useValue: POLYGON_CACHE_POLICIES });
    },
  };
}
