// The top-ups port: what a key whose balance is spent can do to get more credits, as its refusal says it.
import type { InjectionToken } from 'tsyringe';
import type { GatewayError } from '../errors/gateway-error.js';
import type { ApiKeyRecord, Plan } from './keys.js';

/** Whose balance ran out (or is about to be charged), and where: what a {@link TopUps} works on. */
export interface TopUpRequest {
  /** The key. */
  readonly key: ApiKeyRecord;
  /** Its plan. */
  readonly plan: Plan;
  /** The network the call or the events were for. */
  readonly network: string;
  /** The transport (`http`, `ws`, ...). */
  readonly transport: string;
  /** The request's headers, lower-cased names, when the transport has them (the `host`, for an offer's resource). */
  readonly headers?: Readonly<Record<string, string | string[] | undefined>> | undefined;
}

/**
 * A way to more credits, added to the `CREDITS_EXHAUSTED` refusal: the client reads it from the answer
 * and acts on it (a payment protocol's offer, a link to buy a larger plan).
 */
export interface TopUpOffer {
  /** Headers added to the refusal's answer (lower-cased names), where the transport has headers. */
  readonly headers?: Readonly<Record<string, string>>;
  /** Entries added to the refusal's `error.data`, beside `dailyCredits`, `remaining`, `cost`, `resetsAt`. */
  readonly data?: Readonly<Record<string, unknown>>;
  /**
   * A few words added to the close reason of a connection the refusal ends (a WebSocket's 4402), where
   * neither headers nor data reach the client: what to do, not the offer itself (a close reason holds
   * 123 bytes in all).
   */
  readonly closeHint?: string;
}

/**
 * The outcome of {@link TopUps.take}: taken (`ok: true`; its credits are in the key's balance, and the
 * call's answer gets `headers`, lower-cased names: a receipt of the top-up), or refused (`ok: false`; the
 * call fails with `error`, a catalog error with its status, data and headers, the offer again among them,
 * and is neither charged nor served).
 */
export type TopUpOutcome =
  | {
      /** Taken. */
      readonly ok: true;
      /** Headers added to the call's answer (lower-cased names). */
      readonly headers?: Readonly<Record<string, string>>;
    }
  | {
      /** Refused. */
      readonly ok: false;
      /** What the call answers. */
      readonly error: GatewayError;
    };

/**
 * What a key whose balance cannot pay for a call can do to get more credits. The `meter` stage asks it
 * when it refuses a call with `CREDITS_EXHAUSTED` and adds the offer's headers and data to the refusal;
 * a connection-holding transport adds its `closeHint` to the close it answers the refusal with. Optional:
 * without one registered, the refusal says only when the balance resets. A plugin that sells credits
 * registers one (at most one: the last registered is used).
 *
 * `offer` is synchronous and must not throw: it is asked on the refusal's path, from what the plugin
 * holds in memory (its offers by plan). Undefined: this key has no way to more credits but waiting.
 *
 * @example
 * ```ts
 * container.register(TopUpsToken, { useValue: {
 *   offer: ({ plan }) => plan.name === 'pro' ? { data: { buy: 'https://example.com/buy' }, closeHint: 'buy credits at example.com' } : undefined,
 * } });
 * ```
 */
export interface TopUps {
  /** The offer for a key whose balance is spent, or undefined when it has none. */
  offer(request: TopUpRequest): TopUpOffer | undefined;
  /**
   * Takes the top-up the request carries (a payment in a header), before the call is charged: undefined
   * when it carries none. The `meter` stage asks it right before it charges a call that costs credits,
   * so it runs after every other stage before `meter` (a call a policy stage refuses spends nothing,
   * whatever the plugins' order), and the credits it adds are there for the charge. The calls of one
   * request (a batch's) share its headers object: an implementation takes a request's top-up once and
   * answers each of its calls with that one outcome.
   */
  take?(request: TopUpRequest): Promise<TopUpOutcome> | undefined;
}

/** The container token of the gateway's {@link TopUps}, when a plugin registered one. */
export const TopUpsToken = Symbol.for('tollgate.TopUps') as InjectionToken<TopUps>;
