/**
 * The allowlist decision: given one set of lists (a key's, or a JWT's claims) and one call, why (if at
 * all) the call is refused.
 *
 * @module
 */
import type { RequestMeta } from '../../core/plugin-api.js';
import { originMatches } from './origin-pattern.js';
import { echo, type Refusal } from './refusal.js';
import type { CompiledAllowlist } from './settings.js';

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

/** Where a set of lists comes from: the key's settings, or the claims of the call's JWT. */
export type ListSource = 'key' | 'jwt';

function fixFor(source: ListSource, list: string, what: string): string {
  return source === 'key'
    ? `add ${what} to the key's "${list}" allowlist in its security settings, or remove that list`
    : `issue a JWT whose "${list}" claim includes ${what}`;
}

/**
 * Why `input` is refused under `lists`, or undefined when it passes every list. Lists are checked in
 * the order methods, origins, User-Agents, client addresses, contract addresses; the first that fails
 * is reported. Refusals repeat only what the client sent (never the key) and name the list (`origins`,
 * or `jwt.origins` for a JWT's claims).
 */
export function refusalOf(lists: CompiledAllowlist, input: AllowlistInput, source: ListSource = 'key'): Refusal | undefined {
  const setting = (list: string): string => (source === 'key' ? list : `jwt.${list}`);
  const by = source === 'key' ? '' : ' by the JWT';
  if (lists.methods !== undefined && !lists.methods.has(input.method)) {
    return { setting: setting('methods'), reason: `method not allowed${by}: ${echo(input.method)}`, fix: fixFor(source, 'methods', 'the method') };
  }
  if (lists.origins !== undefined) {
    const origin = input.meta.origin;
    if (origin === undefined || origin === '') {
      return { setting: setting('origins'), reason: `origin not allowed${by}: the request has no Origin header`, fix: `call from a page whose origin is allowed (browsers send Origin), or ${fixFor(source, 'origins', 'the origin')}` };
    }
    if (!lists.origins.some((pattern) => originMatches(pattern, origin))) {
      return { setting: setting('origins'), reason: `origin not allowed${by}: ${echo(origin)}`, fix: fixFor(source, 'origins', 'the origin (https://*.example.com allows every subdomain)') };
    }
  }
  if (lists.userAgents !== undefined) {
    const userAgent = input.meta.userAgent;
    if (userAgent === undefined || userAgent === '') {
      return { setting: setting('userAgents'), reason: `user agent not allowed${by}: the request has no User-Agent header`, fix: `send a User-Agent header, or ${fixFor(source, 'userAgents', 'a part of it')}` };
    }
    if (!lists.userAgents.some((part) => userAgent.includes(part))) {
      return { setting: setting('userAgents'), reason: `user agent not allowed${by}: ${echo(userAgent)}`, fix: fixFor(source, 'userAgents', 'a part of the User-Agent (case-sensitive)') };
    }
  }
  if (lists.clientAddresses !== undefined) {
    const client = input.meta.remoteAddress;
    if (client === undefined || !lists.clientAddresses.includes(client)) {
      return { setting: setting('clientAddresses'), reason: `client address not allowed${by}: ${client === undefined ? 'unknown' : echo(client)}`, fix: fixFor(source, 'clientAddresses', 'the address or its range') };
    }
  }
  if (lists.addresses !== undefined) {
    const extract = ADDRESS_METHODS[input.method];
    if (extract !== undefined) {
      const addresses = extract(Array.isArray(input.params) ? input.params : []);
      if (addresses.length === 0) {
        const reason = input.method === 'eth_getLogs'
          ? `contract address not allowed${by}: eth_getLogs needs an address (or addresses) in its filter`
          : `contract address not allowed${by}: ${input.method} needs a "to" address`;
        return { setting: setting('addresses'), reason, fix: 'name an allowed contract address in the call' };
      }
      for (const address of addresses) {
        if (typeof address !== 'string' || !lists.addresses.has(address.toLowerCase())) {
          return { setting: setting('addresses'), reason: `contract address not allowed${by}: ${typeof address === 'string' ? echo(address) : String(address)}`, fix: fixFor(source, 'addresses', 'the address') };
        }
      }
    }
  }
  return undefined;
}
