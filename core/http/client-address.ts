import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';
import { AddressRanges } from '../config/address-ranges.js';

/** Compiled lists by the config array they came from: a reload brings a new array, hence a new list. */
const compiled = new WeakMap<readonly string[], AddressRanges>();

function trustedOf(entries: readonly string[]): AddressRanges {
  let list = compiled.get(entries);
  if (list === undefined) compiled.set(entries, (list = new AddressRanges(entries)));
  return list;
}

/** One hop of `X-Forwarded-For` as an address (a port or IPv6 brackets stripped), or undefined when it is none. */
function hopAddress(text: string): string | undefined {
  const hop = text.trim();
  if (isIP(hop) !== 0) return hop;
  if (hop.startsWith('[')) {
    const close = hop.indexOf(']');
    const inner = close === -1 ? '' : hop.slice(1, close);
    return isIP(inner) === 6 ? inner : undefined;
  }
  const v4WithPort = /^([0-9.]+):[0-9]{1,5}$/.exec(hop);
  return v4WithPort !== null && isIP(v4WithPort[1]!) === 4 ? v4WithPort[1] : undefined;
}

/**
 * The hops `X-Forwarded-For` lists, the client's first and the nearest proxy's last (several headers
 * count as one list, in order). A hop that is no address (`unknown`, garbage) is undefined.
 *
 * RFC 7239's `Forwarded` is not read: were both read, a client could write the one its balancer does
 * not, and be believed. Balancers write `X-Forwarded-For`.
 */
function forwardedHops(headers: IncomingMessage['headers']): (string | undefined)[] {
  const value = headers['x-forwarded-for'];
  if (value === undefined) return [];
  const list = Array.isArray(value) ? value.join(',') : value;
  return list.trim() === '' ? [] : list.split(',').map(hopAddress);
}

/** `::ffff:a.b.c.d`, as a dual-stack socket reports an IPv4 peer, as `a.b.c.d`: one spelling per client. */
function plain(address: string): string {
  // Checked on every request: a plain IPv4 or IPv6 peer costs a character comparison, not a copy.
  if (address.charCodeAt(0) !== 58 /* : */ || !/^::ffff:/i.test(address)) return address;
  const v4 = address.slice(7);
  return isIP(v4) === 4 ? v4 : address;
}

/**
 * The address of the client behind `req`, for logs, allowlists and per-address limits. When the peer
 * that connected is one of `trustedProxies` (the config's `server.trustedProxies`), `X-Forwarded-For`
 * is read from the nearest hop back: each hop a trusted proxy added is believed, and the first
 * address that is not a trusted proxy is the client (the rightmost untrusted one). A hop that is no
 * address ends the walk at the last trusted hop. A peer that is not trusted is the client, whatever
 * headers it sends, so a client cannot choose its own address. IPv4 addresses are given as IPv4, also
 * when a dual-stack socket reports them as `::ffff:a.b.c.d`.
 *
 * @example
 * ```ts
 * import { clientAddress, type Transport } from 'tollgate/transport';
 *
 * const transport: Transport = {
 *   name: 'example',
 *   handleRequest(req, res, gateway) {
 *     gateway.logger.info({ client: clientAddress(req, gateway.config.server.trustedProxies) }, 'request');
 *     return false;
 *   },
 * };
 * ```
 */
export function clientAddress(req: IncomingMessage, trustedProxies: readonly string[]): string | undefined {
  const socketAddress = req.socket.remoteAddress;
  if (socketAddress === undefined) return undefined;
  const peer = plain(socketAddress);
  if (trustedProxies.length === 0) return peer;
  const trusted = trustedOf(trustedProxies);
  if (!trusted.includes(peer)) return peer;
  const hops = forwardedHops(req.headers);
  let client = peer;
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = hops[i];
    if (hop === undefined) return client;
    client = plain(hop);
    if (!trusted.includes(client)) return client;
  }
  return client;
}
