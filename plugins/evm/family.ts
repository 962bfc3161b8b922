/**
 * Assembles the evm network family: the method table plus the limits hooks, configured.
 *
 * @module
 */
import type { MethodDefinition, NetworkFamily } from '../../core/index.js';
import { gasCap } from './gas-cap.js';
import { getLogsLimits } from './get-logs-limits.js';
import { EVM_METHODS } from './methods.js';
import type { EvmSettings } from './options.js';

/** The name of the family, as networks reference it in the config (`families: [evm]`). */
export const EVM_FAMILY_NAME = 'evm';

/** The hooks each limited method gets, by method name. */
function limitsHooks(settings: EvmSettings): Readonly<Record<string, Partial<MethodDefinition>>> {
  const capGas = gasCap({ percent: settings.gasCapPercent, ttlMs: settings.blockGasLimitTtlMs, clock: settings.clock });
  return {
    eth_getLogs: getLogsLimits({
      maxParams: settings.getLogsMaxParams,
      maxResults: settings.getLogsMaxResults,
      timeoutMs: settings.getLogsTimeoutMs,
    }),
    eth_call: { limits: capGas },
    eth_estimateGas: { limits: capGas },
  };
}

/**
 * The evm family with `settings` applied: every method of {@link EVM_METHODS}, `eth_getLogs` limited
 * in parameters, results and duration, `eth_call` and `eth_estimateGas` gas-capped; its health probe
 * is `eth_blockNumber`.
 */
export function createEvmFamily(settings: EvmSettings): NetworkFamily {
  const hooks = limitsHooks(settings);
  return {
    name: EVM_FAMILY_NAME,
    methods: EVM_METHODS.map((method) => ({ ...method, ...hooks[method.name] })),
    probe: { method: 'eth_blockNumber', params: [] },
  };
}
