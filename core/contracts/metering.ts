// The metering port: one charge of a key's throughput bucket and balances (the day's, then the paid one), refunding itself.
import type { InjectionToken } from 'tsyringe';
import type { MaybePromise } from '../util/maybe-promise.js';
import type { DebitReceipt } from './credit-ledger.js';

/**
 * What a charge is held to: the key's daily balance, and, for a call the client times itself, its
 * throughput. A key's `Plan` is one.
 */
export interface ChargeLimits {
  /** Credits the key may spend per UTC day. */
  readonly dailyCredits: number;
  /**
   * Credits per second the key's throughput bucket refills at, and holds at most. Absent: no bucket is
   * taken (events the client does not time, such as a subscription's), and the charge is never
   * refused for throughput.
   */
  readonly creditsPerSecond?: number;
}

/** A charge that was taken: the call (or the events) may be served. */
export interface Charged {
  /** Always true. */
  readonly ok: true;
  /**
   * The debit, as the credit ledger keeps it: its id, key, day and credits. Usage reads it (the call's
   * `debit`), and the ledger's own `refund` accepts it too (it applies a refund once per debit id).
   */
  readonly receipt: DebitReceipt;
  /** Credits left that day. */
  readonly remaining: number;
  /** Credits left in the key's paid balance (the receipt's `paid` says what this charge took from it). */
  readonly paidRemaining: number;
  /**
   * Gives the charge back where it was taken from (the day part into its day, the paid part into the
   * paid balance), once: a second call does nothing and settles
   * with the first. Never throws; a failing store rejects (the caller logs it).
   */
  refund(): MaybePromise<void>;
}

/** A charge refused because the key's throughput bucket is empty; nothing was taken. */
export interface ChargeRateLimited {
  /** Always false. */
  readonly ok: false;
  /** The error the `meter` stage answers with (`Errors.RATE_LIMITED`, 429). */
  readonly code: 'RATE_LIMITED';
  /** How long until the bucket holds enough, in ms. */
  readonly retryAfterMs: number;
}

/**
 * A charge refused because the day's balance and the paid balance together cannot cover it: no credits
 * were taken (the throughput
 * bucket's tokens were, as for any call that got past it).
 */
export interface ChargeExhausted {
  /** Always false. */
  readonly ok: false;
  /** The error the `meter` stage answers with (`Errors.CREDITS_EXHAUSTED`, 402). */
  readonly code: 'CREDITS_EXHAUSTED';
  /** Credits left that day. */
  readonly remaining: number;
  /** Credits left in the key's paid balance. */
  readonly paidRemaining: number;
  /** When the day's balance resets (the next 00:00 UTC). */
  readonly resetsAt: Date;
}

/** A charge refused, with the reason as a stable code. */
export type ChargeRefused = ChargeRateLimited | ChargeExhausted;

/** The outcome of {@link Metering.charge}. */
export type Charge = Charged | ChargeRefused;

/**
 * Charges a key: its throughput bucket, then its balances (the day's, then the paid one), as one operation. The `meter` stage
 * charges every call through it, and the gateway's event meter every delivered event (without a
 * bucket), so a store can do both in one step (the Redis store runs one script) and no store ever
 * needs to guess which bucket belongs to which debit.
 *
 * The contract: a refusal spends no credits; the bucket is taken first, so a throttled call never
 * reaches the balance; the bucket refills at `creditsPerSecond` and holds at most that many
 * credits, and a call costing more than the whole bucket passes when the bucket is full. A store that
 * cannot be reached fails with `GatewayError(Errors.METERING_UNAVAILABLE)` (503, not charged).
 *
 * The default, `LimiterLedgerMetering`, takes the registered `RateLimiter` (bucket named by the key's
 * id), then debits the registered `CreditLedger`. Balances, refunds of a receipt and usage keep going
 * through the `CreditLedger`: this port only charges.
 *
 * @example
 * ```ts
 * const charge = await metering.charge(key.id, 80, plan, Date.now());
 * if (!charge.ok) throw new GatewayError(Errors[charge.code]);
 * ctx.compensations.push(() => charge.refund());
 * ```
 */
export interface Metering {
  /** Charges `credits` to `keyId` under `limits`, at `now` (ms since the epoch, the gateway's clock). */
  charge(keyId: string, credits: number, limits: ChargeLimits, now: number): MaybePromise<Charge>;
}

/** The {@link Metering} of a gateway (default: `LimiterLedgerMetering` over its rate limiter and credit ledger). */
export const MeteringToken = Symbol.for('tollgate.Metering') as InjectionToken<Metering>;
