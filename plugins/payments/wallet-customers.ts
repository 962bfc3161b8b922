import { createHmac } from 'node:crypto';
import { GatewayError, Errors, step, type ErrorEntry, type RequestContext, type StageDefinition, type Clock } from '../../core/plugin-api.js';
import { apiKeyHash, recordOf, type KeyRegistry, type StoredKey } from '../../core/store-api.js';
import type { PaymentDesk, PaymentOutcome } from './payment-desk.js';
import type { PaymentRefusal } from './payment-refusal.js';
import { x402Http } from './peers.js';
import type { WalletSettings } from './settings.js';
import type { PaymentPayload, PaymentRequired } from './x402-types.js';

/** The stage's name; it runs right before `authenticate`, over HTTP. */
export const WALLET_STAGE = 'paymentsWallet';

/** The response header that carries a wallet's API key, on the answer to the call that paid without one. */
export const WALLET_KEY_HEADER = 'x-tollgate-key';

/** The x402 request header of a payment. */
export const PAYMENT_SIGNATURE_HEADER = 'payment-signature';

/** A wallet's key: its stable id and the API key derived from the wallet's address. */
export interface WalletKey {
  /** `x402-<address in lower-case hex, without 0x>`: one id per wallet. */
  readonly id: string;
  /** The API key (`tg_x402_…`): HMAC-SHA256 of the address under the wallets' `keySecret`. */
  readonly apiKey: string;
}

/** The key of `address` (a 20-byte hex address, any case) under `keySecret`: the same every time. */
export function walletKeyOf(keySecret: string, address: string): WalletKey {
  const wallet = address.toLowerCase();
  const mac = createHmac('sha256', keySecret).update(`tollgate x402 wallet key ${wallet}`).digest('base64url');
  return { id: `x402-${wallet.slice(2)}`, apiKey: `tg_x402_${mac.slice(0, 32)}` };
}

// Answers of this stage. A wallet without a key that sends no payment gets the plan's offer; a payment
// the desk refused is answered with its status and reason. Both are 402s a client can act on.
const PAYMENT_REQUIRED: ErrorEntry = Object.freeze({
  name: 'PAYMENT_REQUIRED',
  code: -33003,
  httpStatus: 402,
  message: 'Payment required',
  advice: 'Pay one of the bundles in the PAYMENT-REQUIRED header (x402) and repeat the call with PAYMENT-SIGNATURE.',
});
const PAYMENT_REFUSED: ErrorEntry = Object.freeze({ ...PAYMENT_REQUIRED, name: 'PAYMENT_REFUSED', code: -33004, message: 'Payment refused' });
const PAYMENT_UNAVAILABLE: ErrorEntry = Object.freeze({ ...PAYMENT_REQUIRED, name: 'PAYMENT_UNAVAILABLE', code: -33005, httpStatus: 503, message: 'Payment facilitator unavailable', advice: 'Try again later; nothing was charged.' });

/** The one header value of `name` in a request's headers. */
function headerOf(ctx: RequestContext, name: string): string | undefined {
  const value = ctx.meta.headers?.[name];
  const text = Array.isArray(value) ? value[0] : value;
  return text === undefined || text === '' ? undefined : text;
}

/** The payer of an EIP-3009 payment header, or undefined when the header is not one. */
function payerOf(header: string): string | undefined {
  let payload: PaymentPayload;
  try {
    payload = x402Http.decodePaymentSignatureHeader(header);
  } catch {
    return undefined;
  }
  const from = (payload?.payload as { authorization?: { from?: unknown } } | undefined)?.authorization?.from;
  return typeof from === 'string' && /^0x[0-9a-fA-F]{40}$/.test(from) ? from : undefined;
}

/** What wallet customers work with, resolved when the gateway runs. */
export interface WalletParts {
  /** The wallets' settings. */
  readonly settings: WalletSettings;
  /** The started desk. */
  readonly desk: () => PaymentDesk;
  /** The gateway's key registry. */
  readonly registry: () => KeyRegistry;
}

/** The answer to a call of `ctx` that the payment refused: its status and reason, and the offer again. */
function refused(outcome: PaymentRefusal, offer: PaymentRequired | undefined): GatewayError {
  const headers: Record<string, string> = offer === undefined ? {} : { 'payment-required': x402Http.encodePaymentRequiredHeader(offer) };
  return new GatewayError(outcome.status === 503 ? PAYMENT_UNAVAILABLE : PAYMENT_REFUSED, {
    message: `payment refused: ${outcome.message}`,
    data: { code: outcome.code, reason: outcome.reason, ...(offer === undefined ? {} : { x402: offer }) },
    headers,
  });
}

/** The x402 resource a wallet's call buys credits for. */
function resourceOf(ctx: RequestContext, plan: string): { url: string; description: string; mimeType: string } {
  const host = headerOf(ctx, 'host') ?? 'localhost';
  return { url: `http://${host}/${ctx.network.name}/v3`, description: `Tollgate credits (plan ${plan})`, mimeType: 'application/json' };
}

/** What a keyless payment of one request came to: the key the calls use, and the headers of the answer. */
interface WalletAdmission {
  readonly key: StoredKey;
  readonly headers: Record<string, string>;
}

/**
 * Wallet customers: a call with no API key gets the 402 offer of the wallets' plan; the same call with a
 * `PAYMENT-SIGNATURE` pays (settled before anything is credited), and the payer's wallet gets its key:
 * made on its first payment, on the wallets' plan, bound to its address (`settings.payments.wallet`),
 * credited with the bundle and returned in the {@link WALLET_KEY_HEADER} header beside
 * `PAYMENT-RESPONSE`. A wallet that pays again without its key is credited on the same key, which is
 * returned again: the key is derived from the address (see {@link walletKeyOf}), so one wallet never has
 * two. The payment is taken once per HTTP request, also for a batch. The key is created only once a
 * payment settled, so a made-up payment creates nothing.
 */
export function walletStage(parts: WalletParts): StageDefinition {
  return {
    name: WALLET_STAGE,
    before: 'authenticate',
    transports: ['http'],
    create({ clock }) {
      // One payment per HTTP request: every call of a batch shares the request's meta.
      const admissions = new WeakMap<object, Promise<WalletAdmission>>();
      return step((ctx) => {
        if (ctx.key !== undefined) return;
        if (ctx.credentials.apiKey !== undefined && ctx.credentials.apiKey !== '') return;
        // The file-storage API's keys need a secret, which a wallet key has not.
        if (ctx.network.config.families.includes('ipfs')) return;
        const { settings } = parts;
        const header = headerOf(ctx, PAYMENT_SIGNATURE_HEADER);
        if (header === undefined) throw offerWithoutKey(ctx, parts.desk(), settings.plan);
        let admission = admissions.get(ctx.meta);
        if (admission === undefined) {
          admission = admit(ctx, header, parts, clock);
          admissions.set(ctx.meta, admission);
        }
        return admission.then(({ key, headers }) => {
          ctx.key = recordOf(key);
          ctx.replyHeaders = { ...ctx.replyHeaders, ...headers };
        });
      });
    },
  };
}

function offerWithoutKey(ctx: RequestContext, desk: PaymentDesk, plan: string): GatewayError {
  const offer = desk.offers.paymentRequired(plan, resourceOf(ctx, plan), 'an API key, or a payment for one');
  if (offer === undefined) return new GatewayError(Errors.UNAUTHORIZED);
  return new GatewayError(PAYMENT_REQUIRED, {
    message: 'API key required, or an x402 payment: pay a bundle in PAYMENT-REQUIRED to get a key with its credits',
    data: { x402: offer },
    headers: { 'payment-required': x402Http.encodePaymentRequiredHeader(offer) },
  });
}

async function admit(ctx: RequestContext, header: string, parts: WalletParts, clock: Clock): Promise<WalletAdmission> {
  const { settings } = parts;
  const desk = parts.desk();
  const registry = parts.registry();
  const payer = payerOf(header);
  if (payer === undefined) {
    throw refused({ ok: false, code: 'PAYMENT_MALFORMED', reason: 'payment_malformed', message: 'the PAYMENT-SIGNATURE header is not an x402 EIP-3009 payment', status: 402 }, desk.offers.paymentRequired(settings.plan, resourceOf(ctx, settings.plan)));
  }
  const wallet = walletKeyOf(settings.keySecret, payer);
  const known = await registry.get(wallet.id);
  // An operator revoked this wallet's key: take nothing, as for any revoked key.
  if (known?.revokedAt !== undefined) throw new GatewayError(Errors.UNAUTHORIZED, { message: `the key of wallet ${payer} is revoked` });
  const plan = known?.plan ?? settings.plan;
  const outcome: PaymentOutcome = await desk.pay(wallet.id, plan, header);
  if (!outcome.ok) throw refused(outcome, desk.offers.paymentRequired(plan, resourceOf(ctx, plan)));
  let key = known;
  if (key === undefined) {
    const now = clock.now();
    const made: StoredKey = {
      id: wallet.id,
      plan,
      label: `x402 wallet ${payer}`,
      keyHash: apiKeyHash(wallet.apiKey),
      keyHint: wallet.apiKey.slice(-4),
      settings: { payments: { wallet: payer.toLowerCase() } },
      createdAt: now,
      updatedAt: now,
    };
    // Two first payments of one wallet at once (two instances): one insert wins, both credit its id.
    key = (await registry.insert(made)) ? made : await registry.get(wallet.id);
    if (key === undefined) throw new Error(`the key of wallet ${payer} could not be stored`);
  }
  const headers: Record<string, string> = { 'payment-response': outcome.responseHeader };
  // An operator may have rotated the wallet's key: the derived one no longer opens it, so none is returned.
  if (key.keyHash === apiKeyHash(wallet.apiKey)) headers[WALLET_KEY_HEADER] = wallet.apiKey;
  return { key, headers };
}
