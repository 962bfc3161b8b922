/**
 * Assembles the evm network family: the method table plus the limits hooks, configured.
 *
 * @module
 */
import type { MethodDefinition, NetworkFamily } from '../../core/index.js';
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

/** The hooks each limited method gets, by method name. */
function limitsHooks(settings: EvmSettings): Readonly<Record<string, Partial<MethodDefinition>>> {
  const capGas = gasCap({ percent: settings.gasCapPercent, ttlMs: settings.blockGasLimitTtlMs, clock: settings.clock });
  const filled = Object.fromEntries(Object.entries(OPTIONAL_BLOCK_POSITION).map(([name, position]) => [name, { limits: defaultBlock(position) }]));
  return {
    ...filled,
    eth_getLogs: getLogsLimits({
      maxParams: settings.getLogsMaxParams,
      maxResults: settings.getLogsMaxResults,
      timeoutMs: settings.getLogsTimeoutMs,
    }),
    eth_call: { limits: defaultBlock(OPTIONAL_BLOCK_POSITION.eth_call!, capGas) },
    eth_estimateGas: { limits: capGas },
    eth_sendRawTransaction: { onNodeError: resentTransaction },
  };
}

/**
 * The evm family with `settings` applied: every method of {@link EVM_METHODS}, `eth_getLogs` limited
 * in parameters, results and duration, `eth_call` and `eth_estimateGas` gas-capped, a missing block
 * parameter filled in as `latest` (see {@link OPTIONAL_BLOCK_POSITION}); its health probe
 * is `eth_blockNumber`.
 */
export function createEvmFamily(settings: EvmSettings): NetworkFamily {
  const hooks = limitsHooks(settings);
  return {
    name: EVM_FAMILY_NAME,
    methods: [...EVM_METHODS.map((method) => ({ ...method, ...hooks[method.name], ...EVM_ANSWER_HEADS[method.name] })), ...EVM_SUBSCRIPTION_METHODS],
    probe: { method: 'eth_blockNumber', params: [], head: blockNumberHead },
    isCallError: isRevert,
    subscriptions: evmSubscriptions(),
  };
}
