import type { RequestContext } from './context.js';
import type { JsonRpcResponse } from './jsonrpc/types.js';
import type { GatewayError } from './errors/gateway-error.js';
import type { NetworkRuntime } from './network.js';
import type { CallProtocol } from './protocol.js';

/** A value or a promise of it: stores answer synchronously when they can, which keeps the hot path short. */
export type MaybePromise<T> = T | Promise<T>;

/** A JSON Schema (draft 2020-12) document, as a plain object. */
export type JsonSchema = object | boolean;

/** What a method's {@link MethodDefinition.limits} hook receives. */
export interface LimitsInput {
  /** The validated parameters (an array for positional methods). */
  readonly params: unknown;
  /** The call's context. */
  readonly ctx: RequestContext;
  /** The network: its per-network state and an uncharged way to ask its upstreams. */
  readonly network: NetworkRuntime;
}

/**
 * One method of a network family: its parameter schema, its credit cost and its policies. Method tables
 * are data; adding a method is adding an entry.
 *
 * @example
 * ```ts
 * const getBalance: MethodDefinition = {
 *   name: 'eth_getBalance',
 *   credits: 80,
 *   params: { type: 'array', prefixItems: [address, blockTag], minItems: 2, items: false },
 *   paramNames: ['address', 'block'],
 * };
 * ```
 */
export interface MethodDefinition {
  /** The method's name as clients call it. */
  readonly name: string;
  /** JSON Schema of the `params` value (missing params are validated as `[]`). */
  readonly params: JsonSchema;
  /**
   * A check the schema cannot express (a checksum, a decoded length), run by `validate` right after the
   * schema, before anything is charged: return a message naming the parameter to refuse with `-32602`.
   */
  readonly checkParams?: (params: unknown) => string | undefined;
  /** Names of the positional parameters, used in error messages. */
  readonly paramNames?: readonly string[];
  /** Credits charged per call. */
  readonly credits: number;
  /** Whether the call may go to a partner provider when no primary can serve (plans permitting). */
  readonly failover?: boolean;
  /** False for calls that must never be sent twice (`eth_sendRawTransaction`). Default true. */
  readonly idempotent?: boolean;
  /** Upstream timeout for this method, overriding the upstream's own. */
  readonly timeoutMs?: number;
  /** The error a client gets when {@link timeoutMs} runs out (default: the catalog's upstream timeout). */
  readonly onTimeout?: () => GatewayError;
  /** Transports that offer the method; all when absent. */
  readonly transports?: readonly string[];
  /**
   * Enforces limits before dispatch: throw a {@link GatewayError} to refuse, return new params to rewrite
   * the call (a capped value), or return nothing to send it unchanged.
   */
  readonly limits?: (input: LimitsInput) => MaybePromise<unknown>;
  /** Inspects the upstream's answer; throw a {@link GatewayError} to replace it with an error. */
  readonly checkResult?: (response: JsonRpcResponse, ctx: RequestContext) => void;
  /** One line for the docs. */
  readonly description?: string;
}

/** A health probe: the call a family makes to see whether an upstream is alive. */
export interface HealthProbe {
  /** Method to call. */
  readonly method: string;
  /** Its parameters. */
  readonly params: readonly unknown[];
}

/**
 * A network family: the methods a kind of network offers, each with its schema and credit cost, as
 * a family plugin defines them. A network combines one or more families.
 */
export interface NetworkFamily {
  /** Unique family name, referenced by networks in the config (`families: [evm, polygon]`). */
  readonly name: string;
  /** The methods the family offers. */
  readonly methods: readonly MethodDefinition[];
  /** How to check an upstream of this family is alive. */
  readonly probe?: HealthProbe;
  /** How calls travel to upstreams (default: JSON-RPC over HTTP POST). */
  readonly protocol?: CallProtocol;
}
