import { Errors, GatewayError, type Clock } from '../../core/plugin-api.js';
import { ScryptWorker } from './scrypt-worker.js';
import { SecretCheckBudget } from './secret-budget.js';
import type { ResolvedIpfsSettings } from './settings.js';

/** Calls over the refusal budget held at once before their 429; more are answered at once. */
const MAX_HELD = 1_024;
/** Longest a call over the refusal budget is held before its 429, ms. */
const MAX_HOLD_MS = 1_000;

/**
 * What bounds the cost of the file-storage API's secret checks, shared by its two stages (a key's own
 * secret, a refused key's decoy check): the refusal budget (per source address and overall) and the
 * checker thread that keeps scrypt off libuv's pool. Opened on first use, closed with the plugin.
 *
 * A call over the budget gets 429 with `Retry-After`, after being held until the budget would have
 * allowed it (at most 1 s; at most 1,024 held at once, past that at once): a client that sends its next
 * guess as soon as it has an answer then sends no faster than the budget, and a held call costs a timer,
 * not CPU, so the refusals of a flood cannot crowd out the file API's own work.
 */
export class SecretGuard {
  /** The checker thread. */
  readonly worker: ScryptWorker;
  readonly #settings: ResolvedIpfsSettings;
  #budget: SecretCheckBudget | undefined;
  #held = 0;

  constructor(settings: ResolvedIpfsSettings) {
    this.#settings = settings;
    this.worker = new ScryptWorker(settings.secretCheckQueue);
  }

  /**
   * Takes one scrypt check for the call's source address: nothing when it may run, else the call's
   * `RATE_LIMITED` refusal (a promise that rejects once the call was held, or thrown at once).
   */
  take(source: string | undefined, clock: Clock): undefined | Promise<never> {
    this.#budget ??= new SecretCheckBudget({ perSource: this.#settings.secretChecksPerSourcePerSecond, overall: this.#settings.secretChecksPerSecond }, clock);
    const wait = this.#budget.take(source ?? '');
    if (wait === 0) return undefined;
    const refusal = new GatewayError(Errors.RATE_LIMITED, {
      message: 'too many secret checks: retry later',
      headers: { 'retry-after': String(Math.max(1, Math.ceil(wait / 1000))) },
    });
    if (this.#held >= MAX_HELD) throw refusal;
    this.#held++;
    return new Promise<never>((_, reject) => {
      setTimeout(() => { this.#held--; reject(refusal); }, Math.min(MAX_HOLD_MS, wait)).unref();
    });
  }

  /** Stops the checker thread. */
  close(): Promise<void> {
    return this.worker.close();
  }
}
