/**
 * A network's `eth_getLogs` splitting settings (`networks[].options.getLogs`).
 *
 * @module
 */
import { ConfigError, validateSettings } from '../../../core/plugin-api.js';

/** How a network splits wide `eth_getLogs` queries. */
export interface GetLogsSplitSettings {
  /** Split wide queries on the gateway. Default false: queries go to the node as the client wrote them. */
  readonly split: boolean;
  /** Widest block range one node query covers; absent: ranges are split only when a node says they are too wide. */
  readonly maxBlockRange?: number;
  /** Node queries of one call in flight at once. Default 4. */
  readonly concurrency: number;
  /** Split calls of one key in flight at once on the network (in one gateway process); more are refused. Default 2. */
  readonly callsPerKey: number;
}

/** The schema of `networks[].options.getLogs`. */
export const GET_LOGS_SPLIT_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: {
    split: { type: 'boolean', default: false },
    maxBlockRange: { type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER },
    concurrency: { type: 'integer', minimum: 1, maximum: 64, default: 4 },
    callsPerKey: { type: 'integer', minimum: 1, maximum: 1024, default: 2 },
  },
} as const;

const parsed = new WeakMap<object, GetLogsSplitSettings>();
const OFF: GetLogsSplitSettings = Object.freeze({ split: false, concurrency: 4, callsPerKey: 2 });

/**
 * The splitting settings of a network, from its options (read once per options object).
 *
 * @param where The options' place in the config, for the problems (`networks[0].options.getLogs`).
 * @throws ConfigError naming the offending field.
 */
export function getLogsSplitSettings(options: Readonly<Record<string, unknown>>, where: string): GetLogsSplitSettings {
  const given = options.getLogs;
  if (given === undefined) return OFF;
  if (typeof given !== 'object' || given === null || Array.isArray(given)) throw new ConfigError([`${where}: must be an object`]);
  const key = options as object;
  let settings = parsed.get(key);
  if (settings === undefined) {
    settings = validateSettings<GetLogsSplitSettings>(GET_LOGS_SPLIT_SCHEMA, [given as object], where);
    parsed.set(key, settings);
  }
  return settings;
}
