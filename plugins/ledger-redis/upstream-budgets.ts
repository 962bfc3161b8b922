import type { Logger } from 'pino';
import { utcDay } from '../../core/store-api.js';
import type { BudgetTake, UpstreamBudgets } from '../../core/upstream-api.js';
import type { RedisConnection } from './connection.js';
import { OutageWarning } from './outage-warning.js';

/**
 * Takes one request from an upstream's budget: `KEYS[1]` counts the second's requests, `KEYS[2]` the
 * day's credits; `ARGV` the requests per second (0: no limit), the daily credits (-1: no limit), the
 * call's credits and the day key's time to live. Nothing is counted when either limit would be passed.
 */
export const TAKE_UPSTREAM_BUDGET = `
local perSecond = tonumber(ARGV[1])
local daily = tonumber(ARGV[2])
local credits = tonumber(ARGV[3])
if perSecond > 0 then
  local requests = tonumber(redis.call('GET', KEYS[1]) or '0')
  if requests + 1 > perSecond then return 0 end
end
if daily >= 0 then
  local used = tonumber(redis.call('GET', KEYS[2]) or '0')
  if used + credits > daily then return 0 end
  redis.call('INCRBY', KEYS[2], credits)
  redis.call('PEXPIRE', KEYS[2], ARGV[4])
end
if perSecond > 0 then
  redis.call('INCR', KEYS[1])
  redis.call('PEXPIRE', KEYS[1], 2000)
end
return 1
`;

const DAY_TTL_MS = 2 * 24 * 3600 * 1000;

type BudgetClient = RedisConnection['client'] & {
  tgTakeUpstreamBudget(second: string, day: string, perSecond: number, daily: number, credits: number, ttlMs: number): Promise<number>;
};

/**
 * {@link UpstreamBudgets} kept in Redis for every instance, on the store's connection: one atomic script
 * per attempt on a budgeted upstream, its keys under one hash tag per network (`<prefix>{budget:<network>}…`),
 * so a Redis Cluster keeps them in one slot. When Redis cannot answer, the upstream is used (the budget is
 * the provider's to enforce; refusing every call for a store outage would be worse) and a warning is logged.
 */
export class RedisUpstreamBudgets implements UpstreamBudgets {
  readonly #client: BudgetClient;
  readonly #prefix: string;
  readonly #outage: OutageWarning;

  constructor(connection: RedisConnection, logger?: Logger) {
    this.#client = connection.client as BudgetClient;
    this.#client.defineCommand('tgTakeUpstreamBudget', { numberOfKeys: 2, lua: TAKE_UPSTREAM_BUDGET });
    this.#prefix = connection.settings.prefix;
    this.#outage = new OutageWarning(logger);
  }

  /** Takes one request from the budget in Redis. */
  async take({ network, upstream, budget, credits, nowMs }: BudgetTake): Promise<boolean> {
    const base = `${this.#prefix}{budget:${network}}:${upstream}`;
    const second = `${base}:s:${Math.floor(nowMs / 1000)}`;
    const day = `${base}:d:${utcDay(new Date(nowMs))}`;
    try {
      const taken = await this.#client.tgTakeUpstreamBudget(second, day, budget.maxRequestsPerSecond ?? 0, budget.dailyCredits ?? -1, credits, DAY_TTL_MS);
      this.#outage.succeeded();
      return taken === 1;
    } catch (error) {
      this.#outage.failed(error, 'upstream budget not checked: Redis did not answer; the upstream is used', { network, upstream });
      return true;
    }
  }
}
