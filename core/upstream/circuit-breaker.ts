/** The state of a {@link CircuitBreaker}. */
export type BreakerState = 'closed' | 'open' | 'half-open';

/** Settings of a {@link CircuitBreaker}. */
export interface CircuitBreakerSettings {
  /** Consecutive failures that open the breaker. */
  readonly failureThreshold: number;
  /** How long the breaker stays open before a trial may close it, ms. */
  readonly cooldownMs: number;
}

/** How many times a breaker moved into each state. */
export interface BreakerTransitions {
  /** closed or half-open → open. */
  opened: number;
  /** open → half-open. */
  halfOpened: number;
  /** half-open → closed. */
  closed: number;
}

/**
 * A circuit breaker for one upstream: **closed** (traffic flows) → **open** after `failureThreshold`
 * consecutive failures (no traffic) → **half-open** once `cooldownMs` passed (a single trial, a probe or
 * one call) → **closed** when the trial succeeds, or **open** again for another cooldown when it fails.
 *
 * It keeps no timers: the caller passes the time (a monotonic `performance.now()`) and asks
 * {@link CircuitBreaker.coolingUntil} when to come back.
 */
export class CircuitBreaker {
  /** The breaker's settings. */
  readonly settings: CircuitBreakerSettings;
  /** Transition counters, for operators. */
  readonly transitions: BreakerTransitions = { opened: 0, halfOpened: 0, closed: 0 };
  #state: BreakerState = 'closed';
  #failures = 0;
  #openedAt = 0;
  #trialUntil = 0;

  constructor(settings: CircuitBreakerSettings) {
    this.settings = settings;
  }

  /** The current state. */
  get state(): BreakerState {
    return this.#state;
  }

  /** Consecutive failures so far (reset by a success). */
  get consecutiveFailures(): number {
    return this.#failures;
  }

  /** When the breaker last opened (monotonic ms), or undefined when it never did. */
  get openedAt(): number | undefined {
    return this.transitions.opened === 0 ? undefined : this.#openedAt;
  }

  /** When an open breaker's cooldown ends (monotonic ms); `Infinity` when it is not open. */
  get coolingUntil(): number {
    return this.#state === 'open' ? this.#openedAt + this.settings.cooldownMs : Infinity;
  }

  /** Moves an open breaker whose cooldown is over to half-open. Returns whether it moved. */
  wake(now: number): boolean {
    if (this.#state !== 'open' || now < this.#openedAt + this.settings.cooldownMs) return false;
    this.#state = 'half-open';
    this.#trialUntil = 0;
    this.transitions.halfOpened++;
    return true;
  }

  /**
   * Claims the single trial of a half-open breaker, for `holdMs` (after which an unfinished trial is
   * given up and another may start). False when the breaker is not half-open or a trial is running.
   */
  claimTrial(now: number, holdMs: number): boolean {
    if (this.#state !== 'half-open' || now < this.#trialUntil) return false;
    this.#trialUntil = now + holdMs;
    return true;
  }

  /** Gives up a claimed trial that sent nothing (its call was refused by the upstream's budget): another may start now. */
  releaseTrial(): void {
    if (this.#state === 'half-open') this.#trialUntil = 0;
  }

  /**
   * Records a success. Returns whether the state changed (half-open → closed). An open breaker ignores
   * it: a call sent before the breaker opened proves little, only a trial after the cooldown counts.
   */
  success(): boolean {
    if (this.#state === 'open') return false;
    this.#failures = 0;
    if (this.#state === 'closed') return false;
    this.#state = 'closed';
    this.transitions.closed++;
    return true;
  }

  /** Records a failure at `now`. Returns whether the breaker opened. */
  failure(now: number): boolean {
    this.#failures++;
    if (this.#state === 'half-open' || (this.#state === 'closed' && this.#failures >= this.settings.failureThreshold)) {
      this.#state = 'open';
      this.#openedAt = now;
      this.transitions.opened++;
      return true;
    }
    return false;
  }
}
