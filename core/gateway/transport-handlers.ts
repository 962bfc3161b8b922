import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import type { Transport } from '../contracts/plugin.js';
import type { GatewayRuntime } from '../contracts/runtime.js';
import { Errors, type ErrorEntry } from '../errors/catalog.js';
import { encodeError } from '../jsonrpc/encode.js';
import { normalizePrefix, urlUnderPrefix, type MountedGateway, type MountRoutes } from './mount.js';

/** Answers a request no transport could take (or one that failed) with a JSON-RPC error body. */
export function replyError(res: ServerResponse, entry: ErrorEntry): void {
  const body = encodeError(null, { code: entry.code, message: entry.message });
  res.writeHead(entry.httpStatus, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

/** The transports that serve `routes`: the clients' (`public`), the operator's (`admin`), or all of them. */
function transportsFor(transports: readonly Transport[], routes: MountRoutes): readonly Transport[] {
  if (routes === 'all') return transports;
  return transports.filter((transport) => (transport.operator === true) === (routes === 'admin'));
}

/**
 * The Node handlers of a gateway's transports: each request or upgrade is offered to the transports
 * of `routes` in order until one claims it. `mount(prefix, routes)` gives the handlers for a path prefix.
 */
export function transportHandlers(all: readonly Transport[], runtime: GatewayRuntime, logger: Logger): (prefix?: string, routes?: MountRoutes) => MountedGateway {
  const handlers = new Map<MountRoutes, (prefix?: string) => MountedGateway>();
  return (prefix, routes = 'all') => {
    let mount = handlers.get(routes);
    if (mount === undefined) handlers.set(routes, (mount = handlersOf(transportsFor(all, routes), runtime, logger)));
    return mount(prefix);
  };
}

function handlersOf(transports: readonly Transport[], runtime: GatewayRuntime, logger: Logger): (prefix?: string) => MountedGateway {
  // True when a transport took the request (or failed after answering began).
  const offerRequest = (req: IncomingMessage, res: ServerResponse): boolean => {
    try {
      for (const transport of transports) if (transport.handleRequest?.(req, res, runtime) === true) return true;
      return false;
    } catch (error) {
      logger.error({ err: error }, 'transport failed');
      if (res.headersSent) res.destroy();
      else replyError(res, Errors.INTERNAL_ERROR);
      return true;
    }
  };
  const offerUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer): boolean => {
    for (const transport of transports) if (transport.handleUpgrade?.(req, socket, head, runtime) === true) return true;
    return false;
  };
  const root: MountedGateway = {
    listener(req, res, next) {
      if (offerRequest(req, res)) return;
      if (next !== undefined) next();
      else replyError(res, Errors.NOT_FOUND);
    },
    upgrade: offerUpgrade,
  };
  // The gateway sees the URL without the prefix; a request it does not take gets its URL back.
  const mountAt = (prefix: string): MountedGateway => ({
    listener(req, res, next) {
      const original = req.url ?? '/';
      const url = urlUnderPrefix(original, prefix);
      if (url !== undefined) {
        req.url = url;
        if (offerRequest(req, res)) return;
        req.url = original;
      }
      if (next !== undefined) next();
      else replyError(res, Errors.NOT_FOUND);
    },
    upgrade(req, socket, head) {
      const original = req.url ?? '/';
      const url = urlUnderPrefix(original, prefix);
      if (url === undefined) return false;
      req.url = url;
      if (offerUpgrade(req, socket, head)) return true;
      req.url = original;
      return false;
    },
  });
  return (prefix) => {
    const normalized = normalizePrefix(prefix);
    return normalized === '' ? root : mountAt(normalized);
  };
}
