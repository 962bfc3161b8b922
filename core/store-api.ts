/**
 * For authors of stores: the credit ledger, rate limiter, metering, key store and usage recorder contracts, the
 * in-memory implementations, and the helpers every store needs (debit ids, UTC days, key hashes). Import it
 * as `tollgate/store`. The filter, pin and dedup-mark stores that families use are here too.
 *
 * @packageDocumentation
 */
import 'reflect-metadata';

export { type CreditLedger, type DebitReceipt, type DebitResult, type DebitTaken, type DebitRefused, type Balance } from './contracts/credit-ledger.js';
export { utcDay, nextUtcMidnight, UtcDayCache } from './util/utc-day.js';
export { MemoryCreditLedger } from './metering/memory-credit-ledger.js';
export { newDebitId } from './metering/debit-id.js';
export { type RateLimiter, type RateDecision, type RateAllowed, type RateRefused } from './contracts/rate-limiter.js';
export { MemoryRateLimiter } from './metering/rate-limiter.js';
export { MeteringToken, type Metering, type Charge, type Charged, type ChargeRefused, type ChargeRateLimited, type ChargeExhausted, type ChargeLimits } from './contracts/metering.js';
export { LimiterLedgerMetering } from './metering/limiter-ledger-metering.js';
export { chargeOf } from './metering/ledger-charge.js';
export type { KeyStore, ApiKeyRecord, Plan } from './contracts/keys.js';
export { KeyRegistryToken, LayeredKeyStore, apiKeyHash, recordOf, type KeyRegistry, type StoredKey, type KeyChanges } from './keys/key-registry.js';
export { PlanRegistryToken, MemoryPlanRegistry, definedOf, type PlanRegistry, type StoredPlan, type PlanChanges, type PlanChangeListener } from './keys/plan-registry.js';
export { type UsageRecorder, type UsageTotals, type UsageEvent, type UsageRow } from './contracts/usage.js';
export { MemoryUsageRecorder, daysBetween } from './usage/usage.js';
export { PendingUsage } from './usage/pending-usage.js';
export { hashSecret, verifySecret } from './keys/secret-hash.js';
export { instanceCachingFactory } from 'tsyringe';
export type { SharedHeads, HeadKey, HeadListener } from './contracts/shared-heads.js';
export type { KeyChangeListener } from './contracts/keys.js';
export type { FilterStore, StoredFilter, FilterLimits } from './contracts/filter-store.js';
export { MemoryFilterStore, newFilterId } from './network/memory-filter-store.js';
export { pinIdOf, type PinStore, type PinRecord, type PinAddResult, type PinStatusName, type PinSettlement, type PinSettleResult } from './contracts/pin-store.js';
export type { DedupMarks } from './contracts/dedup-marks.js';
