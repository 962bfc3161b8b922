/**
 * The solana family's method table: one entry per method, as data. The decode check of
 * `getAccountInfo`'s address and the transport restriction are attached by `createSolanaFamily` (see
 * `family.ts`); credit costs are explained in this plugin's README.
 *
 * @module
 */
import type { MethodDefinition } from '../../core/plugin-api.js';
import { accountInfoConfig, contextConfig, noParams, positional, pubkey } from './schemas.js';

/**
 * Every method of the solana family. The first two are the spec's, with the spec's credits; the
 * others are the health and head calls that clients and probes make (`getHealth`, `getSlot`,
 * `getVersion`), at a small cost.
 */
export const SOLANA_METHODS: readonly MethodDefinition[] = [
  // --- The spec's methods -----------------------------------------------------------------------
  {
    name: 'getAccountInfo',
    params: positional([pubkey, accountInfoConfig], 1),
    paramNames: ['address', 'config'],
    credits: 160,
    failover: false,
    idempotent: true,
    description: 'An account: lamports, owner, data (base58, base64, base64+zstd or jsonParsed), executable, rent epoch, space; null when it does not exist.',
  },
  {
    name: 'getClusterNodes',
    params: noParams,
    paramNames: [],
    credits: 160,
    failover: false,
    idempotent: true,
    description: "The nodes of the cluster: each node's public key, gossip, TPU and RPC addresses, software version, feature set and shred version.",
  },
  // --- Health and head calls of clients and probes ---------------------------------------------
  {
    name: 'getHealth',
    params: noParams,
    paramNames: [],
    credits: 5,
    failover: false,
    idempotent: true,
    description: '"ok" when the node is healthy; an error (-32005) when it is behind.',
  },
  {
    name: 'getSlot',
    params: positional([contextConfig], 0),
    paramNames: ['config'],
    credits: 5,
    failover: false,
    idempotent: true,
    description: 'The slot the node has reached at a commitment level (default finalized).',
  },
  {
    name: 'getVersion',
    params: noParams,
    paramNames: [],
    credits: 5,
    failover: false,
    idempotent: true,
    description: 'The node\'s software version (`solana-core`) and feature-set identifier (`feature-set`).',
  },
];
