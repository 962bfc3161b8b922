/**
 * The payments plugin: x402 (v2) payments that buy credit bundles, settled before they count and
 * credited exactly once. Offers by plan as x402 `PaymentRequirements`, a facilitator by URL or embedded
 * (`@x402/evm`'s exact scheme with the operator's settlement key), the payment journal (memory, SQLite, Redis)
 * and the desk that takes a `PAYMENT-SIGNATURE`. It needs the optional peers `@x402/core`, `@x402/evm`
 * and `viem`.
 *
 * @packageDocumentation
 */
export { payments, PaymentDeskToken, PaymentJournalToken, type PaymentsOptions, type PaymentsPlugin } from './plugin.js';
export { PAYMENTS_PLUGIN, resolvePaymentsSettings, type PaymentsSettings, type ResolvedPaymentsSettings, type BundleOffer, type UrlFacilitatorSettings, type EmbeddedFacilitatorSettings, type FacilitatorChoice, type ResolvedUrlFacilitator, type ResolvedEmbeddedFacilitator, type WalletSettings, type JournalStore } from './settings.js';
export { walletKeyOf, WALLET_KEY_HEADER, type WalletKey } from './wallet-customers.js';
export { OfferBook, requirementsOf, X402_VERSION, type PricedBundle } from './offers.js';
export { FacilitatorUnavailableError, type PaymentFacilitator, type AuthorizationState } from './facilitator.js';
export { urlFacilitator, type UrlFacilitatorOptions } from './url-facilitator.js';
export { embeddedFacilitator, type EmbeddedFacilitator, type EmbeddedFacilitatorOptions } from './embedded-facilitator.js';
export { paymentIdOf, JOURNAL_LIST_LIMIT, type PaymentJournal, type JournalEntry, type JournalQuery, type PaymentTerms, type SettledPayment, type SettlingPayment, type PaymentState } from './payment-journal.js';
export { MemoryPaymentJournal } from './memory-payment-journal.js';
export { SqlitePaymentJournal, type JournalDatabase, type JournalStatement, type JournalRunResult } from './sqlite-payment-journal.js';
export { RedisPaymentJournal, type JournalRedis, type JournalRedisClient } from './redis-payment-journal.js';
export { LedgerPaidCredits, type PaidCredits } from './paid-credits.js';
export { PaymentDesk, type PaymentDeskParts, type PaymentOutcome, type PaymentTaken, type RecoveryReport } from './payment-desk.js';
export { refusal, type PaymentRefusal, type PaymentRefusalCode } from './payment-refusal.js';
export type { Network, PaymentPayload, PaymentRequired, PaymentRequirements, ResourceInfo, SettleResponse, VerifyResponse } from './x402-types.js';
