// The payments plugin's hook into the gateway: the core's `TopUps` port, offering x402 bundles and taking
// a request's payment.
import { Errors, GatewayError, type TopUpOffer, type TopUpOutcome, type TopUpRequest, type TopUps } from '../../core/plugin-api.js';
import type { OfferBook } from './offers.js';
import type { PaymentDesk, PaymentOutcome } from './payment-desk.js';
import type { PaymentRefusal } from './payment-refusal.js';
import { x402Http } from './peers.js';
import type { PaymentRequired, ResourceInfo } from './x402-types.js';

/** The x402 v2 request header that carries a payment. */
export const PAYMENT_SIGNATURE_HEADER = 'payment-signature';
/** The x402 v2 answer header that carries the offer (a 402's). */
export const PAYMENT_REQUIRED_HEADER = 'payment-required';
/** The x402 v2 answer header that carries the settlement of a payment taken. */
export const PAYMENT_RESPONSE_HEADER = 'payment-response';
/** What a WebSocket client whose key ran out is told to do (its 4402 close reason has no room for the offer). */
export const WS_TOP_UP_HINT = 'x402: top up over HTTP, then reconnect';
/** The x402 `error` of the offer on a refusal for credits. */
const EXHAUSTED = 'credits exhausted: buy a bundle';

/** The first value of a request header. */
export function first(value: string | readonly string[] | undefined): string | undefined {
  return typeof value === 'string' ? value : value?.[0];
}

/** What the offer is for: the network's calls at the host the client asked (never the URL: it holds the key). */
function resourceOf(network: string, headers: TopUpRequest['headers']): ResourceInfo {
  const host = first(headers?.['x-forwarded-host']) ?? first(headers?.host) ?? 'localhost';
  const proto = first(headers?.['x-forwarded-proto']) ?? 'http';
  return { url: `${proto}://${host}/${network}`, description: `Tollgate credits for calls to ${network}`, mimeType: 'application/json' };
}

/** The x402 offer of `plan` for a request to `network` (undefined when the plan sells nothing). */
export function paymentRequiredFor(offers: OfferBook, plan: string, network: string, headers: TopUpRequest['headers'], error: string): PaymentRequired | undefined {
  return offers.paymentRequired(plan, resourceOf(network, headers), error);
}

/**
 * The payment each HTTP request made, by the request's headers object (shared by the calls of a batch):
 * whichever step takes a request's payment first (a wallet's, before `authenticate`; a key's, in `meter`)
 * records it here, and the others find it instead of paying again.
 */
export type RequestPayments = WeakMap<object, Promise<PaymentOutcome>>;

/** What the x402 top-ups work with. */
export interface X402TopUpParts {
  /** The plans' bundles. */
  readonly offers: OfferBook;
  /** The started desk. */
  readonly desk: () => PaymentDesk;
  /** The request's payment, shared with the wallet stage. */
  readonly taken: RequestPayments;
}

/**
 * The payments plugin's `TopUps`. `offer`: a key on a plan that sells bundles is offered them on its 402
 * (`PAYMENT-REQUIRED`, and `error.data.x402`), and its WebSocket's 4402 close reason says where to pay.
 * `take`: an HTTP request's `PAYMENT-SIGNATURE` is paid through the desk (verify, settle, record,
 * credit) once per request (the calls of a batch wait for the one payment), when `meter` is about to
 * charge its first call: a payment taken lets the charge find the bundle in the key's paid balance, and
 * the answer carries `PAYMENT-RESPONSE`; a refused one fails every call of the request with
 * `PAYMENT_REFUSED` (402) or `PAYMENT_UNAVAILABLE` (503), the offer again in `PAYMENT-REQUIRED`, and
 * nothing credited or served.
 */
export function x402TopUps(parts: X402TopUpParts): TopUps {
  const { offers, desk, taken } = parts;
  return {
    offer(request): TopUpOffer | undefined {
      const required = paymentRequiredFor(offers, request.plan.name, request.network, request.headers, EXHAUSTED);
      if (required === undefined) return undefined;
      return { headers: { [PAYMENT_REQUIRED_HEADER]: x402Http.encodePaymentRequiredHeader(required) }, data: { x402: required }, closeHint: WS_TOP_UP_HINT };
    },
    take(request): Promise<TopUpOutcome> | undefined {
      // Only HTTP requests carry a payment: a socket's calls top up over HTTP (the 4402's pointer).
      const headers = request.headers;
      if (request.transport !== 'http' || headers === undefined) return undefined;
      const header = first(headers[PAYMENT_SIGNATURE_HEADER]);
      if (header === undefined || header === '') return undefined;
      let outcome = taken.get(headers);
      if (outcome === undefined) {
        outcome = desk().pay(request.key.id, request.plan.name, header);
        taken.set(headers, outcome);
      }
      return outcome.then((result): TopUpOutcome => {
        if (!result.ok) return { ok: false, error: refused(result, offers, request.plan.name, request.network, headers) };
        return { ok: true, headers: { [PAYMENT_RESPONSE_HEADER]: result.responseHeader } };
      });
    },
  };
}

/** The answer to a call whose payment `outcome` refused: a key on `plan` is offered its bundles again. */
export function refused(outcome: PaymentRefusal, offers: OfferBook, plan: string, network: string, headers: TopUpRequest['headers']): GatewayError {
  const required = paymentRequiredFor(offers, plan, network, headers, outcome.reason);
  return new GatewayError(outcome.status === 503 ? Errors.PAYMENT_UNAVAILABLE : Errors.PAYMENT_REFUSED, {
    message: `payment not taken (${outcome.code}): ${outcome.message}`,
    data: { code: outcome.code, reason: outcome.reason, ...(required === undefined ? {} : { x402: required }) },
    ...(required === undefined ? {} : { headers: { [PAYMENT_REQUIRED_HEADER]: x402Http.encodePaymentRequiredHeader(required) } }),
  });
}
