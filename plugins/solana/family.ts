/**
 * Assembles the solana network family: the method table with its hooks (address decode checks, limits,
 * the network's default commitment, answer heads, `minContextSlot` routing, the resent-transaction
 * reading), and the transports the methods are offered on.
 *
 * @module
 */
import type { LimitsInput, MethodDefinition, NetworkFamily } from '../../core/family-api.js';
import { minContextSlot, slotHead, SOLANA_ANSWER_HEADS } from './answer-heads.js';
import { defaultCommitment } from './commitment.js';
import { airdropGate, blocksRangeCheck, programAccountsCap } from './limits.js';
import { SOLANA_METHODS } from './methods.js';
import { SOLANA_SUBSCRIPTION_DEFINITIONS, solanaSubscriptions } from './subscriptions/index.js';
import { pubkeyParamCheck } from './pubkey.js';
import { resentTransaction } from './resent-transaction.js';

/** The name of the family, as networks reference it in the config (`families: [solana]`). */
export const SOLANA_FAMILY_NAME = 'solana';

/**
 * The transports the solana methods are offered on by default: HTTP only, as the spec shows them, and
 * as a Solana node offers them (its WebSocket port serves subscriptions only). See the README.
 */
export const SOLANA_DEFAULT_TRANSPORTS: readonly string[] = Object.freeze(['http']);

/** The most accounts a `getProgramAccounts` answer may carry, by default. */
export const DEFAULT_PROGRAM_ACCOUNTS_MAX_RESULTS = 10_000;

/** Options of `createSolanaFamily` and `solanaFamily()`. */
export interface SolanaFamilyOptions {
  /**
   * The transports that offer the family's methods: transport names (default `['http']`), or `'all'`
   * to offer them on every transport the gateway has (JSON-RPC over the gateway's WebSocket too).
   */
  readonly transports?: readonly string[] | 'all';
  /** The most accounts a `getProgramAccounts` answer may carry; beyond, `-32005`, uncharged. Default 10,000. */
  readonly programAccountsMaxResults?: number;
  /**
   * How long the same signed transaction, sent again by the same key on the same network, is charged no
   * more (its first send's charge covers it), in milliseconds. Default 60,000.
   */
  readonly resendWindowMs?: number;
}

/** The positional parameters that are single public keys, decoded before dispatch (`Invalid param: WrongSize`). */
const PUBKEY_AT: Readonly<Record<string, readonly [number, string]>> = {
  getAccountInfo: [0, 'address'],
  getBalance: [0, 'address'],
  getTokenAccountBalance: [0, 'address'],
  getTokenSupply: [0, 'mint'],
  getTokenLargestAccounts: [0, 'mint'],
  getSignaturesForAddress: [0, 'address'],
  getProgramAccounts: [0, 'programId'],
  getTokenAccountsByOwner: [0, 'owner'],
  getTokenAccountsByDelegate: [0, 'delegate'],
  requestAirdrop: [0, 'address'],
};

/** Methods that carry no commitment of their own (a send's is its `preflightCommitment`, the caller's to choose). */
const NO_DEFAULT_COMMITMENT = new Set(['getSignatureStatuses', 'sendTransaction']);

/** Runs `first`, then `then` on the params it left (or rewrote). */
function chain(first: (input: LimitsInput) => void, then: (input: LimitsInput) => unknown): (input: LimitsInput) => unknown {
  return (input) => {
    first(input);
    return then(input);
  };
}

/** The hooks of one method. */
function hooksOf(method: MethodDefinition, options: SolanaFamilyOptions): Partial<MethodDefinition> {
  const hooks: { -readonly [K in keyof MethodDefinition]?: MethodDefinition[K] } = { minHead: minContextSlot, ...SOLANA_ANSWER_HEADS[method.name] };
  const pubkeyAt = PUBKEY_AT[method.name];
  if (pubkeyAt !== undefined) hooks.checkParams = pubkeyParamCheck(...pubkeyAt);
  if (method.name === 'getBlocks') hooks.checkParams = blocksRangeCheck;
  const configAt = method.paramNames?.indexOf('config') ?? -1;
  const commitment = configAt >= 0 && !NO_DEFAULT_COMMITMENT.has(method.name) ? defaultCommitment(method.name, configAt) : undefined;
  if (commitment !== undefined) hooks.limits = commitment;
  if (method.name === 'requestAirdrop') hooks.limits = commitment === undefined ? airdropGate : chain(airdropGate, commitment);
  if (method.name === 'getProgramAccounts') hooks.checkResult = programAccountsCap(options.programAccountsMaxResults ?? DEFAULT_PROGRAM_ACCOUNTS_MAX_RESULTS);
  if (method.name === 'sendTransaction') hooks.onNodeError = resentTransaction;
  return hooks;
}

/**
 * The solana family: every method of `SOLANA_METHODS`, offered on `options.transports` (HTTP only by
 * default), with their hooks; its health probe is `getSlot` at `processed`, so each node's slot is
 * tracked and a node whose slot stalls while the others advance falls behind and leaves the rotation.
 */
export function createSolanaFamily(options: SolanaFamilyOptions = {}): NetworkFamily {
  const transports = options.transports ?? SOLANA_DEFAULT_TRANSPORTS;
  const offeredOn: Partial<MethodDefinition> = transports === 'all' ? {} : { transports: [...transports] };
  return {
    name: SOLANA_FAMILY_NAME,
    // The subscriptions keep their own transports: they need a connection whatever the calls are offered on.
    methods: [...SOLANA_METHODS.map((method) => ({ ...method, ...offeredOn, ...hooksOf(method, options) })), ...SOLANA_SUBSCRIPTION_DEFINITIONS],
    subscriptions: solanaSubscriptions(),
    probe: { method: 'getSlot', params: [{ commitment: 'processed' }], head: slotHead },
  };
}
