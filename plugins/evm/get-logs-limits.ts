/**
 * The limits of `eth_getLogs`: how many addresses and topics a filter may hold, how many logs an
 * answer may carry, and how long a query may run.
 *
 * @module
 */
import { Errors, GatewayError } from '../../core/plugin-api.js';
import type { MethodDefinition } from '../../core/family-api.js';

/** The thresholds `getLogsLimits` enforces. */
export interface GetLogsThresholds {
  /** Most addresses plus topic values in one filter. */
  readonly maxParams: number;
  /** Most logs in one answer. */
  readonly maxResults: number;
  /** Longest a query may run, in milliseconds. */
  readonly timeoutMs: number;
}

/** The hooks of `eth_getLogs`'s method definition. */
export type GetLogsHooks = Required<Pick<MethodDefinition, 'limits' | 'checkResult' | 'timeoutMs' | 'onTimeout'>>;

function countValues(value: unknown): number {
  if (typeof value === 'string') return 1;
  if (Array.isArray(value)) return value.reduce((sum: number, item: unknown) => sum + countValues(item), 0);
  return 0; // null: a wildcard, not a value
}

/**
 * Counts the parameters of an `eth_getLogs` filter: every address, and every topic value, those in
 * nested arrays (the alternatives of a position) included. `null` wildcards are not values and do not
 * count.
 */
export function countLogFilterParams(filter: unknown): number {
  if (typeof filter !== 'object' || filter === null) return 0;
  const { address, topics } = filter as { address?: unknown; topics?: unknown };
  return countValues(address) + (Array.isArray(topics) ? countValues(topics) : 0);
}

/**
 * The `eth_getLogs` limits as method hooks: `limits` refuses a filter with more than `maxParams`
 * addresses and topics, `checkResult` replaces an answer of more than `maxResults` logs with the
 * spec's -32005 error, and a query that runs past `timeoutMs` ends with the spec's timeout error.
 */
export function getLogsLimits(thresholds: GetLogsThresholds): GetLogsHooks {
  const { maxParams, maxResults, timeoutMs } = thresholds;
  return {
    limits({ params }) {
      const count = countLogFilterParams(Array.isArray(params) ? params[0] : undefined);
      if (count > maxParams) {
        throw new GatewayError(Errors.LIMIT_EXCEEDED, {
          message: `query has ${count} addresses and topics, more than the limit of ${maxParams}`,
        });
      }
      return undefined;
    },
    checkResult(answer) {
      // Counted by scanning: the logs are not parsed to be counted.
      const count = answer.kind === 'result' ? answer.length('result') : undefined;
      if (count !== undefined && count > maxResults) {
        throw new GatewayError(Errors.LIMIT_EXCEEDED, { message: `query returned more than ${maxResults} results` });
      }
    },
    timeoutMs,
    onTimeout: () => new GatewayError(Errors.LIMIT_EXCEEDED, { message: 'query timeout exceeded' }),
  };
}
