import type { PlanConfig } from './types.js';

/**
 * Plans every gateway knows unless the config overrides them. Growth and Custom are the plans whose
 * calls may fail over to a partner provider.
 */
export const defaultPlans: Readonly<Record<string, PlanConfig>> = Object.freeze({
  core: { dailyCredits: 6_000_000, creditsPerSecond: 2_000, failover: false },
  developer: { dailyCredits: 15_000_000, creditsPerSecond: 4_000, failover: false },
  team: { dailyCredits: 75_000_000, creditsPerSecond: 40_000, failover: false },
  growth: { dailyCredits: 200_000_000, creditsPerSecond: 100_000, failover: true },
  custom: { dailyCredits: 1_000_000_000, creditsPerSecond: 250_000, failover: true },
});
