import { FacilitatorUnavailableError, type PaymentFacilitator } from './facilitator.js';
import { x402Http } from './peers.js';
import type { PaymentPayload, PaymentRequirements, SettleResponse, VerifyResponse } from './x402-types.js';

/** Options of {@link urlFacilitator}. */
export interface UrlFacilitatorOptions {
  /** The facilitator's base URL (`POST <url>/verify`, `POST <url>/settle`). */
  readonly url: string;
  /** Per-request timeout in ms. */
  readonly timeoutMs: number;
}

/** What @x402/core's client throws for a refusal the facilitator answered (a 4xx with a verify/settle body). */
interface AnsweredRefusal {
  readonly name: 'VerifyError' | 'SettleError';
  readonly invalidReason?: string;
  readonly invalidMessage?: string;
  readonly errorReason?: string;
  readonly errorMessage?: string;
  readonly payer?: string;
  readonly transaction?: string;
}

function answeredRefusal(error: unknown, name: AnsweredRefusal['name']): AnsweredRefusal | undefined {
  return error instanceof Error && error.name === name ? (error as unknown as AnsweredRefusal) : undefined;
}

/**
 * A facilitator reached over HTTP, as the hosted ones are, through `@x402/core`'s `HTTPFacilitatorClient`.
 * A refusal it answers (a 4xx with a verify or settle body) is a refusal value; no answer, a timeout or a
 * malformed answer is a {@link FacilitatorUnavailableError}.
 */
export function urlFacilitator(options: UrlFacilitatorOptions): PaymentFacilitator {
  const client = new x402Http.HTTPFacilitatorClient({ url: options.url.replace(/\/+$/, ''), timeoutMs: options.timeoutMs });
  return {
    kind: 'url',
    async verify(payload: PaymentPayload, requirements: PaymentRequirements): Promise<VerifyResponse> {
      try {
        return await client.verify(payload, requirements);
      } catch (error) {
        const refused = answeredRefusal(error, 'VerifyError');
        if (refused !== undefined) return { isValid: false, invalidReason: refused.invalidReason ?? 'unknown_reason', invalidMessage: refused.invalidMessage, payer: refused.payer };
        throw new FacilitatorUnavailableError('verify', (error as Error).message, { cause: error });
      }
    },
    async settle(payload: PaymentPayload, requirements: PaymentRequirements): Promise<SettleResponse> {
      try {
        return await client.settle(payload, requirements);
      } catch (error) {
        const refused = answeredRefusal(error, 'SettleError');
        if (refused !== undefined) {
          return { success: false, errorReason: refused.errorReason ?? 'unknown_reason', errorMessage: refused.errorMessage, payer: refused.payer, transaction: refused.transaction ?? '', network: requirements.network };
        }
        throw new FacilitatorUnavailableError('settle', (error as Error).message, { cause: error });
      }
    },
  };
}
