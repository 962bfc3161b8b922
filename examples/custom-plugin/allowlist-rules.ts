/**
 * The allowlist decision: given one key's lists and one call, why (if at all) the call is refused.
 *
 * @module
 */
import type { RequestMeta } from 'tollgate';
import type { CompiledAllowlist } from './allowlist-settings.js';
import { originMatches } from './origin-pattern.js';

/** What the decision looks at: the call's method and validated params, and the connection's headers. */
export interface AllowlistInput {
  /** The method called. */
  readonly method: string;
  /** Its parameters, after schema validation. */
  readonly params: unknown;
  /** The connection's facts (for WebSocket: those of the upgrade request). */
  readonly meta: RequestMeta;
}

/**
 * Where each address-taking method carries its address(es), as an extractor returning the addresses the
 * call names (an empty list when it names none, which an address allowlist refuses).
 */
export const ADDRESS_METHODS: Readonly<Record<string, (params: readonly unknown[]) => readonly unknown[]>> = Object.freeze({
  eth_call: (params) => toOf(params[0]),
  eth_estimateGas: (params) => toOf(params[0]),
  eth_getLogs: (params) => filterAddresses(params[0]),
  eth_getBalance: (params) => [params[0]],
  eth_getCode: (params) => [params[0]],
  eth_getStorageAt: (params) => [params[0]],
  eth_getTransactionCount: (params) => [params[0]],
});

function field(value: unknown, name: string): unknown {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[name] : undefined;
}

function toOf(call: unknown): unknown[] {
  const to = field(call, 'to');
  return to === undefined || to === null ? [] : [to];
}

function filterAddresses(filter: unknown): unknown[] {
  const address = field(filter, 'address');
  if (address === undefined || address === null) return [];
  return Array.isArray(address) ? address : [address];
}

const MAX_ECHO = 100;

/** A client-sent value made safe to put in a message: printable ASCII, at most 100 characters. */
function echo(value: string): string {
  const printable = value.replace(/[^\x20-\x7e]/g, '?');
  return printable.length > MAX_ECHO ? `${printable.slice(0, MAX_ECHO)}...` : printable;
}

/**
 * Why `input` is refused under `lists`, as the message for the client, or undefined when it passes
 * every list. Lists are checked in the order methods, origins, User-Agents, addresses; the first that
 * fails is reported. Messages repeat only what the client sent (never the key) and name the list.
 */
export function refusalOf(lists: CompiledAllowlist, input: AllowlistInput): string | undefined {
  if (lists.methods !== undefined && !lists.methods.has(input.method)) {
    return `method not allowed: ${echo(input.method)}`;
  }
  if (lists.origins !== undefined) {
    const origin = input.meta.origin;
    if (origin === undefined || origin === '') return 'origin not allowed: the request has no Origin header';
    if (!lists.origins.some((pattern) => originMatches(pattern, origin))) return `origin not allowed: ${echo(origin)}`;
  }
  if (lists.userAgents !== undefined) {
    const userAgent = input.meta.userAgent;
    if (userAgent === undefined || userAgent === '') return 'user agent not allowed: the request has no User-Agent header';
    if (!lists.userAgents.some((part) => userAgent.includes(part))) return `user agent not allowed: ${echo(userAgent)}`;
  }
  if (lists.addresses !== undefined) {
    const extract = ADDRESS_METHODS[input.method];
    if (extract !== undefined) {
      const addresses = extract(Array.isArray(input.params) ? input.params : []);
      if (addresses.length === 0) {
        return input.method === 'eth_getLogs'
          ? 'contract address not allowed: eth_getLogs needs an address (or addresses) in its filter'
          : `contract address not allowed: ${input.method} needs a "to" address`;
      }
      for (const address of addresses) {
        if (typeof address !== 'string' || !lists.addresses.has(address.toLowerCase())) {
          return `contract address not allowed: ${typeof address === 'string' ? echo(address) : String(address)}`;
        }
      }
    }
  }
  return undefined;
}
