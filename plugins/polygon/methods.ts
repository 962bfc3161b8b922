/**
 * The polygon family's method table: Polygon PoS (Bor) methods beyond the evm family's.
 *
 * @module
 */
import type { MethodDefinition } from '../../core/family-api.js';

/** Every method of the polygon family. Credit costs are explained in this plugin's README. */
export const POLYGON_METHODS: readonly MethodDefinition[] = [
  {
    name: 'bor_getCurrentValidators',
    // No parameters: `[]`, or no `params` member at all (the core validates that as `[]`).
    params: { type: 'array', maxItems: 0 },
    paramNames: [],
    credits: 80,
    failover: true,
    idempotent: true,
    description: "The current validator set of the Bor chain: each validator's ID, signer address, voting power and proposer priority.",
  },
];
