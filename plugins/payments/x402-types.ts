// The x402 v2 protocol types this plugin speaks, from @x402/core (types only: erased at run time).
export type { Network, PaymentPayload, PaymentRequired, PaymentRequirements, ResourceInfo, SettleResponse, VerifyResponse } from '@x402/core/types';
