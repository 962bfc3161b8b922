import type { InjectionToken } from 'tsyringe';
import type { MaybePromise } from '../util/maybe-promise.js';
import type { Plan } from '../contracts/keys.js';

/** A plan as a {@link PlanRegistry} keeps it: the plan and when it was created and last changed. */
export interface StoredPlan extends Plan {
  /** When the plan was created (ms since epoch). */
  readonly createdAt: number;
  /** When the plan was last changed (ms since epoch). */
  readonly updatedAt: number;
}

/** What {@link PlanRegistry.update} may change; absent fields stay as they are. */
export interface PlanChanges {
  /** New daily credits. */
  readonly dailyCredits?: number;
  /** New sustained throughput, in credits per second. */
  readonly creditsPerSecond?: number;
  /** Whether calls may fail over to a partner provider. */
  readonly failover?: boolean;
}

/**
 * Told that plans changed, wherever the change was made (this process, another worker or instance
 * sharing the store, the CLI): the listener reads them again with {@link PlanRegistry.list}.
 */
export type PlanChangeListener = () => void;

/**
 * Plans that operators manage at run time (create, list, change, delete), beside the plans of the config
 * file, implemented by the durable store plugins. The gateway keeps every plan in memory and reads them
 * again when told of a change: a call never waits for the store to learn its key's plan.
 */
export interface PlanRegistry {
  /** Adds a plan. Resolves false, changing nothing, when a plan with that name exists. */
  insert(plan: StoredPlan): MaybePromise<boolean>;
  /** The plan named `name`. */
  get(name: string): MaybePromise<StoredPlan | undefined>;
  /** Every plan, ordered by name. */
  list(): MaybePromise<StoredPlan[]>;
  /** Changes a plan and stamps `updatedAt` with `now`; resolves the changed plan, or undefined when there is none. */
  update(name: string, changes: PlanChanges, now: number): MaybePromise<StoredPlan | undefined>;
  /** Removes a plan; resolves false when there was none. Whether a key still uses it is the caller's check. */
  delete(name: string): MaybePromise<boolean>;
  /**
   * Calls `listener` whenever plans change, wherever the change was made. Returns the way to stop
   * listening. Changes made elsewhere may arrive a moment later (a store without notifications polls).
   */
  watch(listener: PlanChangeListener): () => void;
}

/**
 * The injection token of the gateway's {@link PlanRegistry}, registered by store plugins that keep plans
 * and read by the gateway and plan-management plugins. Absent when the gateway only knows the config's
 * plans.
 */
export const PlanRegistryToken = Symbol.for('tollgate.PlanRegistry') as InjectionToken<PlanRegistry>;

/** A {@link PlanRegistry} in process memory: for tests and a single process whose plans need not last. */
export class MemoryPlanRegistry implements PlanRegistry {
  readonly #plans = new Map<string, StoredPlan>();
  readonly #listeners = new Set<PlanChangeListener>();

  insert(plan: StoredPlan): boolean {
    if (this.#plans.has(plan.name)) return false;
    this.#plans.set(plan.name, { ...plan });
    this.#tell();
    return true;
  }

  get(name: string): StoredPlan | undefined {
    const plan = this.#plans.get(name);
    return plan === undefined ? undefined : { ...plan };
  }

  list(): StoredPlan[] {
    return [...this.#plans.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)).map((plan) => ({ ...plan }));
  }

  update(name: string, changes: PlanChanges, now: number): StoredPlan | undefined {
    const current = this.#plans.get(name);
    if (current === undefined) return undefined;
    const updated: StoredPlan = { ...current, ...definedOf(changes), updatedAt: now };
    this.#plans.set(name, updated);
    this.#tell();
    return { ...updated };
  }

  delete(name: string): boolean {
    const deleted = this.#plans.delete(name);
    if (deleted) this.#tell();
    return deleted;
  }

  watch(listener: PlanChangeListener): () => void {
    this.#listeners.add(listener);
    return () => { this.#listeners.delete(listener); };
  }

  /** Tells the listeners once the change is done, never inside the caller's operation. */
  #tell(): void {
    if (this.#listeners.size === 0) return;
    queueMicrotask(() => { for (const listener of this.#listeners) listener(); });
  }
}

/** The fields of `changes` that are set (an explicit `undefined` changes nothing). */
export function definedOf(changes: PlanChanges): PlanChanges {
  return Object.fromEntries(Object.entries(changes).filter(([, value]) => value !== undefined)) as PlanChanges;
}
