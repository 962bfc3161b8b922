import { utcDay } from '../util/utc-day.js';
import type { BudgetTake, UpstreamBudgets } from '../contracts/upstream-budgets.js';

interface Counts {
  second: number;
  requests: number;
  day: string;
  credits: number;
}

/** {@link UpstreamBudgets} within one process: the default, right for a gateway that runs alone. */
export class MemoryUpstreamBudgets implements UpstreamBudgets {
  readonly #counts = new Map<string, Counts>();

  /** Takes one request when both the second's requests and the day's credits allow it. */
  take({ network, upstream, budget, credits, nowMs }: BudgetTake): boolean {
    const id = `${network}\u0000${upstream}`;
    const second = Math.floor(nowMs / 1000);
    const day = utcDay(new Date(nowMs));
    let counts = this.#counts.get(id);
    if (counts === undefined) this.#counts.set(id, (counts = { second, requests: 0, day, credits: 0 }));
    if (counts.second !== second) { counts.second = second; counts.requests = 0; }
    if (counts.day !== day) { counts.day = day; counts.credits = 0; }
    if (budget.maxRequestsPerSecond !== undefined && counts.requests + 1 > budget.maxRequestsPerSecond) return false;
    if (budget.dailyCredits !== undefined && counts.credits + credits > budget.dailyCredits) return false;
    counts.requests++;
    counts.credits += credits;
    return true;
  }
}
