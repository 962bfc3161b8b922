/**
 * Assembles the evm network family: the method table plus the limits hooks, configured.
 *
 * @module
 */
import { ConfigError } from '../../core/plugin-api.js';
import { MemoryFilterStore, type FilterStore } from '../../core/store-api.js';
import type { MethodDefinition, NetworkFamily } from '../../core/family-api.js';
import { filterMethods } from './filters/filter-methods.js';
import { EVM_DEBUG_METHODS } from './debug-methods.js';
import { EVM_STANDARD_METHODS } from './standard-methods.js';
import { splitGetLogs } from './get-logs-split/split-get-logs.js';
import { getLogsSplitSettings } from './get-logs-split/settings.js';
import { isRangeTooWide } from './get-logs-split/range-too-wide.js';
import { defaultBlock, OPTIONAL_BLOCK_POSITION } from './default-block.js';
import { gasCap } from './gas-cap.js';
import { getLogsLimits } from './get-logs-limits.js';
import { EVM_METHODS } from './methods.js';
import { EVM_SUBSCRIPTION_METHODS, evmSubscriptions } from './subscriptions/index.js';
import { blockNumberHead, isRevert } from './answers.js';
import type { EvmSettings } from './options.js';
import { EVM_ANSWER_HEADS } from './answer-heads.js';
import { resentTransaction } from './resent-transaction.js';

/** The name of the family, as networks reference it in the config (`families: [evm]`). */
export const EVM_FAMILY_NAME = 'evm';

/**
 * Namespaces in which Ethereum node software (geth, Nethermind, Besu, Erigon, Anvil, Hardhat) administers
 * the node rather than serves the chain: accounts and signing, mining, peers, the consensus client's
 * engine API, validator votes, and a test chain's state (balances, code, impersonation, mining, snapshots).
 * A forward policy passes their methods only when named one by one.
 */
export const EVM_ADMIN_NAMESPACES: readonly string[] = Object.freeze([
  'admin', 'personal', 'miner', 'txpool', 'engine', 'anvil', 'hardhat', 'evm', 'clique', 'les', 'debug',
  'parity', 'signer', 'perm', 'plugins', 'ibft', 'qbft',
]);

/** The hooks each limited method gets, by method name. */
function limitsHooks(settings: EvmSettings): Readonly<Record<string, Partial<MethodDefinition>>> {
  const capGas = gasCap({ percent: settings.gasCapPercent, ttlMs: settings.blockGasLimitTtlMs, clock: settings.clock });
  const filled = Object.fromEntries(Object.entries(OPTIONAL_BLOCK_POSITION).map(([name, position]) => [name, { limits: defaultBlock(position) }]));
  const getLogs = getLogsLimits({ maxParams: settings.getLogsMaxParams, maxResults: settings.getLogsMaxResults, timeoutMs: settings.getLogsTimeoutMs });
  const splitLimits = { maxResults: settings.getLogsMaxResults, timeoutMs: settings.getLogsTimeoutMs };
  return {
    ...filled,
    eth_getLogs: {
      ...getLogs,
      // The filter's size is checked first; then, on a network that splits, the gateway may serve the call by parts.
      limits(input) {
        getLogs.limits(input);
        const split = getLogsSplitSettings(input.network.options, `networks[${input.network.name}].options.getLogs`);
        return split.split ? splitGetLogs(input, split, splitLimits).then(() => undefined) : undefined;
      },
    },
    eth_call: { limits: defaultBlock(OPTIONAL_BLOCK_POSITION.eth_call!, capGas) },
    eth_estimateGas: { limits: capGas },
    eth_sendRawTransaction: { onNodeError: resentTransaction },
  };
}

/**
 * The family's method table with `settings` applied: the standard methods, the `debug_` ones when turned
 * on (limited to `debug.plans` when given), and the operator's prices.
 *
 * @throws ConfigError when `credits` prices a method the family does not define (a typo would otherwise go unnoticed).
 */
function methodTable(settings: EvmSettings, filters: readonly MethodDefinition[]): MethodDefinition[] {
  const debug = settings.debug.enabled === true ? EVM_DEBUG_METHODS.map((m) => (settings.debug.plans === undefined ? m : { ...m, plans: settings.debug.plans })) : [];
  const known = new Set([...EVM_METHODS, ...EVM_STANDARD_METHODS, ...filters, ...EVM_DEBUG_METHODS, ...EVM_SUBSCRIPTION_METHODS].map((m) => m.name));
  const unknown = Object.keys(settings.credits).filter((name) => !known.has(name));
  if (unknown.length > 0) throw new ConfigError(unknown.map((name) => `plugins.evm.credits.${name}: the evm family has no method ${name}`));
  const priced = (method: MethodDefinition): MethodDefinition => (settings.credits[method.name] === undefined ? method : { ...method, credits: settings.credits[method.name]! });
  return [...EVM_METHODS, ...EVM_STANDARD_METHODS, ...filters, ...debug, ...EVM_SUBSCRIPTION_METHODS].map(priced);
}

/**
 * The evm family with `settings` applied: every method of `EVM_METHODS`, `eth_getLogs` limited
 * in parameters, results and duration, `eth_call` and `eth_estimateGas` gas-capped, a missing block
 * parameter filled in as `latest` (see `OPTIONAL_BLOCK_POSITION`); its health probe
 * is `eth_blockNumber`. The polling filters keep their state in `filterStore` (in a gateway: the
 * deployment's `Tokens.FilterStore`; without one, a store of this family's own, in memory).
 */
export function createEvmFamily(settings: EvmSettings, filterStore?: () => FilterStore): NetworkFamily {
  const hooks = limitsHooks(settings);
  const ownStore = filterStore === undefined ? new MemoryFilterStore() : undefined;
  const filters = filterMethods({
    store: filterStore ?? (() => ownStore!),
    limits: { maxPerKey: settings.filtersPerKey, idleMs: settings.filterIdleMs },
    clock: settings.clock,
  });
  return {
    name: EVM_FAMILY_NAME,
    methods: methodTable(settings, filters).map((method) => ({ ...method, ...hooks[method.name], ...EVM_ANSWER_HEADS[method.name] })),
    probe: { method: 'eth_blockNumber', params: [], head: blockNumberHead },
    // A node's "range too wide" is its answer to the query, never a provider's capacity error to fail over on.
    isCallError: (error) => isRevert(error) || isRangeTooWide(error),
    subscriptions: evmSubscriptions(),
    adminNamespaces: EVM_ADMIN_NAMESPACES,
    // With tracing off, no debug_ method reaches a node, whatever a forward policy names.
    closedNamespaces: settings.debug.enabled === true ? [] : ['debug'],
  };
}
