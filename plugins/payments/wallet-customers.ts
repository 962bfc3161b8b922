import { createHmac } from 'node:crypto';
import { GatewayError, Errors, step, type RequestContext, type StageDefinition, type Clock } from '../../core/plugin-api.js';
import { apiKeyHash, recordOf, type KeyRegistry, type StoredKey } from '../../core/store-api.js';
import type { PaymentDesk } from './payment-desk.js';
import { first, paymentRequiredFor, refused, PAYMENT_REQUIRED_HEADER, PAYMENT_SIGNATURE_HEADER, type RequestPayments } from './x402-top-ups.js';
import { refusal } from './payment-refusal.js';
import { x402Http } from './peers.js';
import type { WalletSettings } from './settings.js';
import type { PaymentPayload } from './x402-types.js';

/** The stage's name; it runs right before `authenticate`, over HTTP. */
export const WALLET_STAGE = 'x402Wallet';

/** The response header that carries a wallet's API key, on the answer to the call that paid without one. */
export const WALLET_KEY_HEADER = 'x-tollgate-key';

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

/** The one value of request header `name`, when it has one. */
function headerOf(ctx: RequestContext, name: string): string | undefined {
  const text = first(ctx.meta.headers?.[name]);
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
  /** The request's payment, shared with the plugin's `TopUps.take` (which then finds it taken). */
  readonly taken: RequestPayments;
}

/** What a keyless payment of one request came to: the key the calls use, and the headers of the answer. */
interface WalletAdmission {
  readonly key: StoredKey;
  /** The wallet's API key, when the stored key is still the derived one. */
  readonly apiKey: string | undefined;
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
        return admission.then(({ key, apiKey }) => {
          // authenticate admits it; meter's top-up finds the request's payment taken and adds PAYMENT-RESPONSE.
          ctx.key = recordOf(key);
          if (apiKey !== undefined) ctx.replyHeaders = { ...ctx.replyHeaders, [WALLET_KEY_HEADER]: apiKey };
        });
      });
    },
  };
}

function offerWithoutKey(ctx: RequestContext, desk: PaymentDesk, plan: string): GatewayError {
  const offer = paymentRequiredFor(desk.offers, plan, ctx.network.name, ctx.meta.headers, 'an API key, or a payment for one');
  if (offer === undefined) return new GatewayError(Errors.UNAUTHORIZED);
  return new GatewayError(Errors.KEY_OR_PAYMENT_REQUIRED, {
    message: 'API key required, or an x402 payment: pay a bundle in PAYMENT-REQUIRED and the answer carries a key with its credits',
    data: { x402: offer },
    headers: { [PAYMENT_REQUIRED_HEADER]: x402Http.encodePaymentRequiredHeader(offer) },
  });
}

async function admit(ctx: RequestContext, header: string, parts: WalletParts, clock: Clock): Promise<WalletAdmission> {
  const { settings } = parts;
  const desk = parts.desk();
  const registry = parts.registry();
  const payer = payerOf(header);
  if (payer === undefined) throw refused(refusal('PAYMENT_MALFORMED', 'the PAYMENT-SIGNATURE header is not an x402 EIP-3009 payment'), desk.offers, settings.plan, ctx.network.name, ctx.meta.headers);
  const wallet = walletKeyOf(settings.keySecret, payer);
  const known = await registry.get(wallet.id);
  // An operator revoked this wallet's key: take nothing, as for any revoked key.
  if (known?.revokedAt !== undefined) throw new GatewayError(Errors.UNAUTHORIZED, { message: `the key of wallet ${payer} is revoked` });
  const plan = known?.plan ?? settings.plan;
  // Keyed by the request's headers object, which every call of the request shares (HTTP has them).
  const request = ctx.meta.headers as object;
  let payment = parts.taken.get(request);
  if (payment === undefined) {
    payment = desk.pay(wallet.id, plan, header);
    parts.taken.set(request, payment);
  }
  const outcome = await payment;
  if (!outcome.ok) throw refused(outcome, desk.offers, plan, ctx.network.name, ctx.meta.headers);
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
  // An operator may have rotated the wallet's key: the derived one no longer opens it, so none is returned.
  return { key, apiKey: key.keyHash === apiKeyHash(wallet.apiKey) ? wallet.apiKey : undefined };
}
