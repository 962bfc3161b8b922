/** Why a payment was not taken. Every refusal leaves nothing credited. */
export type PaymentRefusalCode =
  /** The `PAYMENT-SIGNATURE` header is not a base64 x402 v2 payment. */
  | 'PAYMENT_MALFORMED'
  /** The payment chose no bundle the key's plan sells. */
  | 'PAYMENT_NO_OFFER'
  /** Not an EIP-3009 authorization (the only kind taken exactly once by its nonce, for now). */
  | 'PAYMENT_UNSUPPORTED'
  /** This payment (its authorization nonce) was taken before: it buys nothing twice. */
  | 'PAYMENT_ALREADY_USED'
  /** The facilitator's verify refused it (bad signature, expired, wrong `payTo` or amount, empty wallet...). */
  | 'PAYMENT_INVALID'
  /** The facilitator's settle failed (the transfer reverted or was not sent). */
  | 'PAYMENT_NOT_SETTLED'
  /** The facilitator could not be asked, or did not answer. */
  | 'FACILITATOR_UNAVAILABLE';

/** A refused payment: a stable code, the x402 reason where the facilitator gave one, the HTTP status. */
export interface PaymentRefusal {
  /** Discriminant. */
  readonly ok: false;
  /** Stable code. */
  readonly code: PaymentRefusalCode;
  /** The x402 reason (`invalid_exact_evm_payload_signature`...) or this plugin's code, lower case. */
  readonly reason: string;
  /** Words for people. */
  readonly message: string;
  /** 402 (pay again, differently) or 503 (the facilitator is away: try later). */
  readonly status: 402 | 503;
}

/** Builds a {@link PaymentRefusal}. */
export function refusal(code: PaymentRefusalCode, message: string, reason: string = code.toLowerCase()): PaymentRefusal {
  return { ok: false, code, reason, message, status: code === 'FACILITATOR_UNAVAILABLE' ? 503 : 402 };
}
