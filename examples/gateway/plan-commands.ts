import { PlanManager, type PlanView } from 'tollgate/plugins/admin';
import type { CliOptions } from './cli.js';

/** What `plans ...` prints with. */
export interface PlanCommandOutput {
  /** Prints `value` as JSON with `--json`, else `text`. */
  print(value: unknown, text: string): void;
}

/** The usage problem of a `plans` command line, or undefined when it is well formed. */
export function plansUsageProblem(cli: CliOptions): string | undefined {
  const [verb, ...rest] = cli.command?.args ?? [];
  if (!['list', 'create', 'update', 'delete'].includes(verb ?? '')) {
    return 'plans: expected list, create <name> --daily-credits <n> --credits-per-second <n> [--failover true|false], update <name> [...] or delete <name>';
  }
  if (verb === 'list' && rest.length !== 0) return 'plans list: takes no arguments';
  if (verb !== 'list' && rest.length !== 1) return `plans ${verb}: expected one plan name`;
  if (verb === 'create' && (cli.dailyCredits === undefined || cli.creditsPerSecond === undefined)) return 'plans create: --daily-credits <n> and --credits-per-second <n> are required';
  if (verb === 'update' && cli.dailyCredits === undefined && cli.creditsPerSecond === undefined && cli.failover === undefined) {
    return 'plans update: give at least one of --daily-credits, --credits-per-second, --failover';
  }
  return undefined;
}

function describePlan(plan: PlanView): string {
  const source = plan.source === 'config' ? '(config file)' : `managed, changed ${plan.updatedAt}`;
  return `${plan.name.padEnd(16)} ${String(plan.dailyCredits).padStart(14)} credits/day ${String(plan.creditsPerSecond).padStart(10)} credits/s  failover ${plan.failover ? 'yes' : 'no '}  ${source}`;
}

/** Runs `plans list|create|update|delete` (already checked by {@link plansUsageProblem}); refusals throw `KeyManagerError`. */
export async function runPlans(cli: CliOptions, plans: PlanManager, io: PlanCommandOutput): Promise<void> {
  const [verb, name] = cli.command!.args;
  const input = {
    ...(cli.dailyCredits === undefined ? {} : { dailyCredits: cli.dailyCredits }),
    ...(cli.creditsPerSecond === undefined ? {} : { creditsPerSecond: cli.creditsPerSecond }),
    ...(cli.failover === undefined ? {} : { failover: cli.failover }),
  };
  if (verb === 'list') {
    const list = await plans.list();
    io.print({ plans: list }, `${list.map(describePlan).join('\n')}\n`);
  } else if (verb === 'create') {
    const plan = await plans.create(name!, input);
    io.print({ plan }, `Created plan ${plan.name}: keys may be put on it now.\n`);
  } else if (verb === 'update') {
    const plan = await plans.update(name!, input);
    io.print({ plan }, `Plan ${plan.name} changed: its keys get it from their next call on.\n`);
  } else {
    const plan = await plans.delete(name!);
    io.print({ plan }, `Deleted plan ${plan.name}.\n`);
  }
}
