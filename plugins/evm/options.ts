/**
 * The evm family's settings: what `evmFamily(options)` and the config's `plugins.evm` section accept,
 * with the spec's defaults.
 *
 * @module
 */
import { systemClock, validateSettingsLayers, type Clock, type ConfigError } from '../../core/plugin-api.js';

/** Settings of the evm family. Every threshold defaults to the value the service spec states. */
export interface EvmFamilyOptions {
  /** Most addresses plus topic values one `eth_getLogs` filter may hold. Default 5,000. */
  readonly getLogsMaxParams?: number;
  /** Most logs one `eth_getLogs` answer may carry before it is replaced by an error. Default 10,000. */
  readonly getLogsMaxResults?: number;
  /** How long an `eth_getLogs` query may run, in milliseconds. Default 10,000. */
  readonly getLogsTimeoutMs?: number;
  /** The `gas` cap of `eth_call` and `eth_estimateGas`, in percent of the block gas limit. Default 1,000 (10 times). */
  readonly gasCapPercent?: number;
  /** How long a learned block gas limit is reused, in milliseconds. Default 5,000. */
  readonly blockGasLimitTtlMs?: number;
  /** How long a filter lives without being polled, in milliseconds. Default 300,000 (a node's 5 minutes). */
  readonly filterIdleMs?: number;
  /** Most live filters one API key may hold. Default 100. */
  readonly filtersPerKey?: number;
  /**
   * How long the same signed transaction, sent again by the same key on the same network, is charged no
   * more (its first send's charge covers it), in milliseconds. Default 60,000.
   */
  readonly resendWindowMs?: number;
  /** Time source of the gas-limit cache (default: the gateway's clock, or the wall clock outside a gateway). */
  readonly clock?: Clock;
  /** The `debug_` tracing namespace: off unless turned on. */
  readonly debug?: EvmDebugOptions;
  /** Credits per call by method name, overriding the family's prices (any method of the family, `debug_` ones included). */
  readonly credits?: Readonly<Record<string, number>>;
}

/** The `debug_` namespace's switch and plan eligibility. */
export interface EvmDebugOptions {
  /** Offer the `debug_` methods. Default false: a call gets -32601 as for any unknown method. */
  readonly enabled?: boolean;
  /** The plans whose keys may call them (others get `FORBIDDEN`); every plan when absent. */
  readonly plans?: readonly string[];
}

/** {@link EvmFamilyOptions} with every default applied. */
export interface EvmSettings {
  /** See {@link EvmFamilyOptions.getLogsMaxParams}. */
  readonly getLogsMaxParams: number;
  /** See {@link EvmFamilyOptions.getLogsMaxResults}. */
  readonly getLogsMaxResults: number;
  /** See {@link EvmFamilyOptions.getLogsTimeoutMs}. */
  readonly getLogsTimeoutMs: number;
  /** See {@link EvmFamilyOptions.gasCapPercent}. */
  readonly gasCapPercent: number;
  /** See {@link EvmFamilyOptions.blockGasLimitTtlMs}. */
  readonly blockGasLimitTtlMs: number;
  /** See {@link EvmFamilyOptions.filterIdleMs}. */
  readonly filterIdleMs: number;
  /** See {@link EvmFamilyOptions.filtersPerKey}. */
  readonly filtersPerKey: number;
  /** See {@link EvmFamilyOptions.resendWindowMs}. */
  readonly resendWindowMs: number;
  /** See {@link EvmFamilyOptions.clock}. */
  readonly clock: Clock;
  /** See {@link EvmFamilyOptions.debug}. */
  readonly debug: EvmDebugOptions;
  /** See {@link EvmFamilyOptions.credits}. */
  readonly credits: Readonly<Record<string, number>>;
}

/** The spec's limits: 5,000 filter parameters, 10,000 results, 10 s per query, gas capped at 1000 %. */
export const EVM_DEFAULTS = Object.freeze({
  /** At most 5,000 addresses plus topics per eth_getLogs filter. */
  getLogsMaxParams: 5_000,
  /** At most 10,000 logs per eth_getLogs answer. */
  getLogsMaxResults: 10_000,
  /** At most 10 s per eth_getLogs query. */
  getLogsTimeoutMs: 10_000,
  /** `gas` capped at 1000 % of the block gas limit. */
  gasCapPercent: 1_000,
  /** A learned block gas limit is reused for 5 s. */
  blockGasLimitTtlMs: 5_000,
  /** A filter not polled for 5 minutes expires, as a node's does. */
  filterIdleMs: 300_000,
  /** At most 100 live filters per API key. */
  filtersPerKey: 100,
  /** The same signed transaction sent again within 60 s is charged once. */
  resendWindowMs: 60_000,
});

type NumericSetting = keyof typeof EVM_DEFAULTS;
const positive = { type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER } as const;

/** One layer of the settings (the code's or the config's): positive integer thresholds, the debug switch, prices. */
const LAYER_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: {
    ...Object.fromEntries(Object.keys(EVM_DEFAULTS).map((name) => [name, positive])),
    debug: {
      type: 'object',
      additionalProperties: false,
      properties: { enabled: { type: 'boolean' }, plans: { type: 'array', items: { type: 'string', minLength: 1 } } },
    },
    credits: {
      type: 'object',
      propertyNames: { pattern: '^[A-Za-z][A-Za-z0-9_]*$' },
      additionalProperties: { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER },
    },
  },
} as const;

type Layer = Partial<Record<NumericSetting, number>> & { debug?: EvmDebugOptions; credits?: Record<string, number> };

/**
 * Applies the defaults. Settings from the config's `plugins.evm` section override the options given
 * in code, which override the spec's defaults. Every threshold must be a positive integer; anything
 * else (or an unknown setting) is a {@link ConfigError}, checked by core's validator.
 */
export function resolveEvmSettings(options: EvmFamilyOptions = {}, fromConfig: Readonly<Record<string, unknown>> = {}, clock: Clock = systemClock): EvmSettings {
  const { clock: ownClock, ...fromCode } = options;
  // Each layer on its own, so a problem names where it came from; the config wins over the code.
  const { debug, credits, ...values } = validateSettingsLayers<Layer>(LAYER_SCHEMA, [['evmFamily()', fromCode], ['plugins.evm', fromConfig]]);
  // Prices merge by method (the config's win); the debug switch is taken whole from the last layer that gives it.
  const prices = { ...fromCode.credits, ...(fromConfig.credits as Record<string, number> | undefined) };
  return { ...EVM_DEFAULTS, ...values, debug: debug ?? {}, credits: credits === undefined ? {} : prices, clock: ownClock ?? clock };
}
