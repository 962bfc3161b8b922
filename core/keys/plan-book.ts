import type { Logger } from 'pino';
import type { GatewayConfig } from '../config/types.js';
import type { Plan, PlanLookup } from '../contracts/keys.js';
import type { PlanRegistry } from './plan-registry.js';


/** The config's plans by name, as the {@link Plan}s keys are checked against. */
export function planMap(plans: Readonly<GatewayConfig['plans']>): Map<string, Plan> {
  return new Map(Object.entries(plans).map(([name, plan]) => [name, { name, ...plan }]));
}

/**
 * Every plan a key may be on: the config's (the current one, after a reload too) and the managed plans
 * of a {@link PlanRegistry}, held in memory so that a call never waits for the store. The managed plans
 * are read when the gateway starts and again on every change the registry announces; a read that fails
 * keeps the plans known before and is logged.
 */
export class PlanBook {
  readonly #config: () => GatewayConfig;
  readonly #logger: Logger;
  #configPlans: Readonly<GatewayConfig['plans']> | undefined;
  #fromConfig = new Map<string, Plan>();
  #managed = new Map<string, Plan>();
  #stop: (() => void) | undefined;
  #reading: Promise<void> | undefined;
  #again = false;

  constructor(config: () => GatewayConfig, logger: Logger) {
    this.#config = config;
    this.#logger = logger;
  }

  /** The plan named `name`: the config's first (a managed plan cannot take a config plan's name), then a managed one. */
  readonly get: PlanLookup = (name) => this.#configMap().get(name) ?? this.#managed.get(name);

  /** Reads `registry`'s plans and follows its changes until {@link PlanBook.stop}. */
  async follow(registry: PlanRegistry): Promise<void> {
    this.#stop = registry.watch(() => void this.#refresh(registry));
    await this.#refresh(registry);
  }

  /** Stops following the registry. */
  stop(): void {
    this.#stop?.();
    this.#stop = undefined;
  }

  /** Reads the plans again; a change announced during a read starts one more read after it. */
  #refresh(registry: PlanRegistry): Promise<void> {
    if (this.#reading !== undefined) {
      this.#again = true;
      return this.#reading;
    }
    this.#reading = (async () => {
      do {
        this.#again = false;
        try {
          const plans = await registry.list();
          this.#managed = new Map(plans.map((p) => [p.name, { name: p.name, dailyCredits: p.dailyCredits, creditsPerSecond: p.creditsPerSecond, failover: p.failover }]));
        } catch (error) {
          this.#logger.error({ err: error }, 'reading the managed plans failed; the plans known before stay in use');
        }
      } while (this.#again);
    })().finally(() => { this.#reading = undefined; });
    return this.#reading;
  }

  /** The config's plans as a map, rebuilt when a reload replaced them. */
  #configMap(): Map<string, Plan> {
    const plans = this.#config().plans;
    if (plans !== this.#configPlans) {
      this.#configPlans = plans;
      this.#fromConfig = planMap(plans);
    }
    return this.#fromConfig;
  }
}
