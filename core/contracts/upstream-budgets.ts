/**
 * An upstream's own plan: what a partner provider (or any metered node) allows the whole deployment,
 * shared by every worker and instance.
 */
export interface UpstreamBudget {
  /** Requests per second the provider accepts (fixed one-second windows); absent: no limit. */
  readonly maxRequestsPerSecond?: number;
  /** Credits per UTC day, counted in the gateway's credits of the methods sent; absent: no limit. */
  readonly dailyCredits?: number;
}

/** One request to take from a budget. */
export interface BudgetTake {
  /** The upstream's network. */
  readonly network: string;
  /** The upstream's name (unique in the gateway). */
  readonly upstream: string;
  /** Its budget. */
  readonly budget: UpstreamBudget;
  /** The credits the call costs. */
  readonly credits: number;
  /** Now, ms since the epoch (the gateway's clock: its UTC day is the budget's day). */
  readonly nowMs: number;
}

/**
 * Keeps upstream budgets: the in-memory default counts within one process; a store plugin (Redis) counts
 * for the deployment. An attempt on an upstream with a budget takes from it once the selector admitted
 * it, right before it is sent; an upstream over its budget is skipped for that call.
 */
export interface UpstreamBudgets {
  /** Takes one request from the budget: true when it was within it (and is now counted), false when over. */
  take(request: BudgetTake): boolean | Promise<boolean>;
}
