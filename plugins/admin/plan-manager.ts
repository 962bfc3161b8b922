import type { KeyRegistry, PlanRegistry, StoredPlan } from '../../core/store-api.js';
import type { GatewayConfig } from '../../core/plugin-api.js';
import { KeyManagerError, storeOperation } from './manager-error.js';

/** A plan as operators see it. */
export interface PlanView {
  /** The plan's name. */
  readonly name: string;
  /** Credits a key may spend per UTC day. */
  readonly dailyCredits: number;
  /** Sustained throughput in credits per second. */
  readonly creditsPerSecond: number;
  /** Whether calls may fail over to a partner provider. */
  readonly failover: boolean;
  /** `config` for plans of the config file (and the default plans), which only the file changes; `store` for managed plans. */
  readonly source: 'config' | 'store';
  /** Creation time (ISO 8601), for managed plans. */
  readonly createdAt?: string;
  /** Last change (ISO 8601), for managed plans. */
  readonly updatedAt?: string;
}

/** The numbers and switch of a plan, as given to {@link PlanManager.create} and {@link PlanManager.update}. */
export interface PlanInput {
  /** Credits a key may spend per UTC day (a whole number, at least 0). */
  readonly dailyCredits?: number;
  /** Sustained throughput in credits per second (above 0). */
  readonly creditsPerSecond?: number;
  /** Whether calls may fail over to a partner provider (default false). */
  readonly failover?: boolean;
}

/** What a {@link PlanManager} works with. */
export interface PlanManagerDeps {
  /** The resolved config: its plans are listed, read-only. */
  readonly config: GatewayConfig;
  /** Where managed plans live; without one, only the config's plans are listed. */
  readonly plans: PlanRegistry | undefined;
  /** The managed keys, checked before a plan is deleted. */
  readonly keys: KeyRegistry | undefined;
  /** Time (ms since epoch). */
  readonly now: () => number;
}

/** Names of managed plans: letters, digits, `.`, `_` and `-`, at most 64. */
export const PLAN_NAME_PATTERN = /^[A-Za-z0-9._-]{1,64}$/;

/**
 * Plan operations shared by the admin API and the example gateway's CLI: lists the config's plans and
 * the managed ones, creates, changes and deletes managed plans. A config plan's name cannot be managed,
 * and a plan a key is on cannot be deleted. Gateways apply a change from the next call on.
 */
export class PlanManager {
  readonly #deps: PlanManagerDeps;

  constructor(deps: PlanManagerDeps) {
    this.#deps = deps;
  }

  /** Every plan: the config's, then the managed ones, each by name. */
  async list(): Promise<PlanView[]> {
    const managed = this.#deps.plans === undefined ? [] : await this.#store(() => this.#deps.plans!.list());
    return [...this.#configPlans(), ...managed.filter((p) => !this.#isConfigPlan(p.name)).map(viewOf)];
  }

  /**
   * One plan.
   *
   * @throws KeyManagerError `not_found`.
   */
  async get(name: string): Promise<PlanView> {
    const fromConfig = this.#configPlans().find((p) => p.name === name);
    if (fromConfig !== undefined) return fromConfig;
    const plan = this.#deps.plans === undefined ? undefined : await this.#store(() => this.#deps.plans!.get(name));
    if (plan === undefined) throw new KeyManagerError('not_found', `no plan "${name}"`);
    return viewOf(plan);
  }

  /**
   * Creates a managed plan.
   *
   * @throws KeyManagerError `bad_request` (bad name or numbers), `conflict` (the name exists, in the
   *   config file or the store) or `read_only` (no store keeps plans).
   */
  async create(name: string, input: PlanInput): Promise<PlanView> {
    const registry = this.#registry();
    if (typeof name !== 'string' || !PLAN_NAME_PATTERN.test(name)) throw new KeyManagerError('bad_request', `name: must match ${PLAN_NAME_PATTERN} (got "${String(name)}")`);
    if (this.#isConfigPlan(name)) throw new KeyManagerError('conflict', `plan "${name}" comes from the config file (or the default plans); change it there, or choose another name`);
    if (input.dailyCredits === undefined) throw new KeyManagerError('bad_request', 'dailyCredits: is required');
    if (input.creditsPerSecond === undefined) throw new KeyManagerError('bad_request', 'creditsPerSecond: is required');
    checkInput(input);
    const now = this.#deps.now();
    const plan: StoredPlan = { name, dailyCredits: input.dailyCredits, creditsPerSecond: input.creditsPerSecond, failover: input.failover ?? false, createdAt: now, updatedAt: now };
    if (!(await this.#store(() => registry.insert(plan)))) throw new KeyManagerError('conflict', `a plan named "${name}" exists`);
    return viewOf(plan);
  }

  /**
   * Changes a managed plan's numbers or failover; keys on it get them from their next call on.
   *
   * @throws KeyManagerError `not_found`, `read_only` (a config plan) or `bad_request`.
   */
  async update(name: string, changes: PlanInput): Promise<PlanView> {
    this.#checkManaged(name);
    checkInput(changes);
    const updated = await this.#store(() => this.#registry().update(name, changes, this.#deps.now()));
    if (updated === undefined) throw new KeyManagerError('not_found', `no plan "${name}"`);
    return viewOf(updated);
  }

  /**
   * Deletes a managed plan no key is on (revoked keys included: their usage still names it).
   *
   * @throws KeyManagerError `not_found`, `read_only` (a config plan) or `conflict` (keys are on it).
   */
  async delete(name: string): Promise<PlanView> {
    this.#checkManaged(name);
    const registry = this.#registry();
    const plan = await this.#store(() => registry.get(name));
    if (plan === undefined) throw new KeyManagerError('not_found', `no plan "${name}"`);
    const keys = this.#deps.keys === undefined ? [] : await this.#store(() => this.#deps.keys!.list());
    const on = keys.filter((k) => k.plan === name).map((k) => k.id);
    if (on.length > 0) {
      const shown = on.slice(0, 5).join(', ') + (on.length > 5 ? `, … (${on.length} keys)` : '');
      throw new KeyManagerError('conflict', `plan "${name}" is the plan of key${on.length === 1 ? '' : 's'} ${shown}: move ${on.length === 1 ? 'it' : 'them'} to another plan first`);
    }
    if (!(await this.#store(() => registry.delete(name)))) throw new KeyManagerError('not_found', `no plan "${name}"`);
    return viewOf(plan);
  }

  /** Whether `name` is a plan a key may be put on: the config's, or a managed one. */
  async exists(name: string): Promise<boolean> {
    if (this.#isConfigPlan(name)) return true;
    return this.#deps.plans !== undefined && (await this.#store(() => this.#deps.plans!.get(name))) !== undefined;
  }

  /** A plan's daily credits (0 when there is no such plan). */
  async dailyCredits(name: string): Promise<number> {
    const fromConfig = this.#deps.config.plans[name];
    if (fromConfig !== undefined) return fromConfig.dailyCredits;
    const managed = this.#deps.plans === undefined ? undefined : await this.#store(() => this.#deps.plans!.get(name));
    return managed?.dailyCredits ?? 0;
  }

  #isConfigPlan(name: string): boolean {
    return Object.hasOwn(this.#deps.config.plans, name);
  }

  #configPlans(): PlanView[] {
    return Object.entries(this.#deps.config.plans)
      .map(([name, plan]) => ({ name, dailyCredits: plan.dailyCredits, creditsPerSecond: plan.creditsPerSecond, failover: plan.failover, source: 'config' as const }));
  }

  #checkManaged(name: string): void {
    if (this.#isConfigPlan(name)) throw new KeyManagerError('read_only', `plan "${name}" comes from the config file (or the default plans); change it there`);
  }

  #registry(): PlanRegistry {
    if (this.#deps.plans === undefined) throw new KeyManagerError('read_only', 'this gateway has no plan store (only the config file\'s plans): load a store plugin such as ledger-sqlite');
    return this.#deps.plans;
  }

  /** Runs a store operation; a store that cannot be reached becomes `unavailable`. */
  #store<T>(operation: () => T | Promise<T>): Promise<T> {
    return storeOperation('plan store', operation);
  }
}

function viewOf(plan: StoredPlan): PlanView {
  return {
    name: plan.name,
    dailyCredits: plan.dailyCredits,
    creditsPerSecond: plan.creditsPerSecond,
    failover: plan.failover,
    source: 'store',
    createdAt: new Date(plan.createdAt).toISOString(),
    updatedAt: new Date(plan.updatedAt).toISOString(),
  };
}

/** Checks the numbers and switch of a plan (the config schema's rules). */
function checkInput(input: PlanInput): void {
  const problems: string[] = [];
  if (input.dailyCredits !== undefined && (!Number.isSafeInteger(input.dailyCredits) || input.dailyCredits < 0)) problems.push(`dailyCredits: must be a whole number, at least 0 (got ${String(input.dailyCredits)})`);
  if (input.creditsPerSecond !== undefined && (typeof input.creditsPerSecond !== 'number' || !Number.isFinite(input.creditsPerSecond) || input.creditsPerSecond <= 0)) problems.push(`creditsPerSecond: must be a number above 0 (got ${String(input.creditsPerSecond)})`);
  if (input.failover !== undefined && typeof input.failover !== 'boolean') problems.push(`failover: must be true or false (got ${String(input.failover)})`);
  if (problems.length > 0) throw new KeyManagerError('bad_request', problems.join('; '));
}
