import { Errors, GatewayError, keyOf, planOf, step, type RequestContext, type RequestMeta, type Stage, type StageDefinition, type TopUpOffer, type TopUpRequest, type TopUps } from '../../core/plugin-api.js';
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

/**
 * The payment each HTTP request made, by the request's meta (shared by the calls of a batch): whichever
 * stage takes a request's payment first records it here, and the others find it instead of paying again.
 */
export type RequestPayments = WeakMap<RequestMeta, Promise<PaymentOutcome>>;

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
 * The payments plugin's `TopUps`: a key on a plan that sells bundles is offered them on its 402
 * (`PAYMENT-REQUIRED`, and `error.data.x402`), and its WebSocket's 4402 close reason says where to pay.
 */
export function x402TopUps(offers: OfferBook): TopUps {
  return {
    offer(request): TopUpOffer | undefined {
      const required = paymentRequiredFor(offers, request.plan.name, request.network, request.headers, EXHAUSTED);
      if (required === undefined) return undefined;
      return { headers: { [PAYMENT_REQUIRED_HEADER]: x402Http.encodePaymentRequiredHeader(required) }, data: { x402: required }, closeHint: WS_TOP_UP_HINT };
    },
  };
}

/** The answer to a call whose payment `outcome` refused: a key on `plan` is offered its bundles again. */
export function refused(outcome: PaymentRefusal, offers: OfferBook, plan: string, ctx: RequestContext): GatewayError {
  const required = paymentRequiredFor(offers, plan, ctx.network.name, ctx.meta.headers, outcome.reason);
  return new GatewayError(outcome.status === 503 ? Errors.PAYMENT_UNAVAILABLE : Errors.PAYMENT_REFUSED, {
    message: `payment not taken (${outcome.code}): ${outcome.message}`,
    data: { code: outcome.code, reason: outcome.reason, ...(required === undefined ? {} : { x402: required }) },
    ...(required === undefined ? {} : { headers: { [PAYMENT_REQUIRED_HEADER]: x402Http.encodePaymentRequiredHeader(required) } }),
  });
}

/**
 * The stage that takes a request's `PAYMENT-SIGNATURE` before its call is metered: once per HTTP request
 * (the calls of a batch wait for the one payment), through the desk (verify, settle, record, credit). A
 * payment taken lets the call go on to `meter` with the bundle in the key's paid balance, and the answer
 * carries `PAYMENT-RESPONSE`; a refused one fails every call of the request with `PAYMENT_REFUSED` (402)
 * or `PAYMENT_UNAVAILABLE` (503), the offer again in `PAYMENT-REQUIRED`, and nothing credited or served.
 */
export function payStage(desk: () => PaymentDesk, taken: RequestPayments = new WeakMap()): StageDefinition {
  return {
    name: 'x402Pay',
    // After authenticate (the key and plan) and validate (a call refused there spends no payment).
    before: 'meter',
    transports: ['http'],
    create(): Stage {
      // One payment per HTTP request: its calls share the request's meta (a batch's calls too).
      return step((ctx) => {
        const header = first(ctx.meta.headers?.[PAYMENT_SIGNATURE_HEADER]);
        if (header === undefined || header === '') return;
        let outcome = taken.get(ctx.meta);
        if (outcome === undefined) {
          outcome = desk().pay(keyOf(ctx).id, planOf(ctx).name, header);
          taken.set(ctx.meta, outcome);
        }
        return outcome.then((result) => {
          if (!result.ok) throw refused(result, desk().offers, planOf(ctx).name, ctx);
          ctx.replyHeaders = { ...ctx.replyHeaders, [PAYMENT_RESPONSE_HEADER]: result.responseHeader };
        });
      });
    },
  };
}
