import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';

/** Where a gateway is mounted in a host server. */
export interface MountOptions {
  /**
   * A path prefix such as `/rpc`: only requests under it are the gateway's, and the gateway sees
   * their path without it (`/rpc/eth/v3/KEY` reaches the `eth` network as `/eth/v3/KEY`). Leave it
   * out when the host already strips a prefix (Express's `app.use('/rpc', ...)` does).
   */
  readonly prefix?: string;
  /**
   * Which routes the handlers serve: `public` (the clients' transports), `admin` (the operator
   * transports: admin API, dashboard, metrics) or `all`. Default: `public` when the config sets
   * `server.adminListen`, so the operator routes stay off a server clients reach; else `all`.
   */
  readonly routes?: MountRoutes;
}

/** Which of a gateway's routes a listener serves (see {@link MountOptions.routes}). */
export type MountRoutes = 'all' | 'public' | 'admin';

/** Called by a mounted listener for a request that is not the gateway's (Connect/Express style). */
export type NextHandler = (error?: unknown) => void;

/** A gateway's Node handlers for a host server of its own, as returned by {@link Gateway.mount}. */
export interface MountedGateway {
  /**
   * A request listener that is also Connect/Express middleware: a request the gateway does not serve
   * goes to `next` with its URL untouched, or gets a JSON-RPC 404 when there is no `next`. The choice
   * is made synchronously: when the listener returns, either `next` was called or the gateway owns the
   * request (frameworks that must know before they read the body, such as Fastify's `onRequest`
   * hook, rely on this).
   */
  readonly listener: (req: IncomingMessage, res: ServerResponse, next?: NextHandler) => void;
  /**
   * An `upgrade` listener: returns true when the gateway took the socket, false when the upgrade is
   * not the gateway's (the socket is untouched, for the host's own WebSocket server or to refuse).
   */
  readonly upgrade: (req: IncomingMessage, socket: Duplex, head: Buffer) => boolean;
}

/** Normalises a mount prefix: `''` for none, else `/a/b` without a trailing slash. */
export function normalizePrefix(prefix: string | undefined): string {
  if (prefix === undefined || prefix === '' || prefix === '/') return '';
  const withSlash = prefix.startsWith('/') ? prefix : `/${prefix}`;
  return withSlash.replace(/\/+$/, '');
}

/**
 * The URL a mounted gateway sees for `url`, or undefined when `url` is outside `prefix`: `/rpc`,
 * `/rpc/...` and `/rpc?...` are inside `/rpc`; `/rpcx` is not.
 */
export function urlUnderPrefix(url: string, prefix: string): string | undefined {
  if (prefix === '') return url;
  if (!url.startsWith(prefix)) return undefined;
  const rest = url.slice(prefix.length);
  if (rest === '') return '/';
  if (rest.startsWith('/')) return rest;
  if (rest.startsWith('?')) return `/${rest}`;
  return undefined;
}
