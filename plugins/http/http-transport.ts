import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { Errors, GatewayError, type ErrorEntry, type JsonRpcId } from '../../core/plugin-api.js';
import { InFlightResponses, apiKeyFromPath, clientAddress, encodeError, refuseBody, type GatewayRuntime, type JsonRpcOutput, type Transport } from '../../core/transport-api.js';
import { BodyTooLargeError, collectBody } from './read-body.js';
import { requestIds } from './request-ids.js';

/** Options of the HTTP JSON-RPC transport. */
export interface HttpTransportOptions {
  /** `Access-Control-Allow-Origin` sent to browsers (default `*`: keys, not origins, guard access). Set `false` to send no CORS headers. */
  readonly corsOrigin?: string | false;
  /** How long `gateway.close()` waits for calls in flight to be answered (default 5000 ms). */
  readonly drainTimeoutMs?: number;
}

const JSON_TYPES = new Set(['application/json', 'application/json-rpc', 'application/jsonrequest']);
/** Answer headers a browser page may read: x402's offer and settlement and a wallet's key (the payments plugin's), the serving upstream. */
const NO_HEADERS: Record<string, string> = Object.freeze({}) as Record<string, string>;
const EXPOSED_HEADERS = 'payment-required, payment-response, x-tollgate-key, x-tollgate-upstream';
/** Where this transport reads the key, for the answer to a call without one. */
const KEY_HINT = 'the URL: /v3/<API_KEY>';

function isJsonContentType(header: string | undefined): boolean {
  if (header === undefined) return false;
  if (header === 'application/json') return true;
  const semicolon = header.indexOf(';');
  return JSON_TYPES.has((semicolon === -1 ? header : header.slice(0, semicolon)).trim().toLowerCase());
}

/**
 * JSON-RPC over HTTP POST at `{network base}/v3/<API_KEY>`: content-type and body-size checks, then the
 * shared JSON-RPC engine; answers with the engine's status, headers and bytes.
 */
export class HttpTransport implements Transport {
  readonly name = 'http';
  readonly #cors: Record<string, string>;
  readonly #inFlight = new InFlightResponses();
  readonly #drainTimeoutMs: number;
  #closing = false;

  constructor(options: HttpTransportOptions = {}) {
    this.#drainTimeoutMs = options.drainTimeoutMs ?? 5_000;
    const origin = options.corsOrigin ?? '*';
    // A page reads the x402 answer headers (a 402's offer, a payment's settlement) only when they are exposed.
    this.#cors = origin === false ? {} : { 'access-control-allow-origin': origin, 'access-control-expose-headers': EXPOSED_HEADERS };
  }

  handleRequest(req: IncomingMessage, res: ServerResponse, gateway: GatewayRuntime): boolean {
    const addressed = gateway.networks.resolve(req.headers.host, req.url ?? '/');
    if (addressed === undefined) return false;
    const apiKey = apiKeyFromPath(addressed.rest, '/v3');
    if (apiKey === undefined) return false;

    if (req.method === 'OPTIONS' && this.#cors['access-control-allow-origin'] !== undefined) {
      res.writeHead(204, {
        ...this.#cors,
        'access-control-allow-methods': 'POST, OPTIONS',
        // authorization: a key's secret (basic) or JWT (bearer), which browser dapps send cross-origin;
        // payment-signature: an x402 payment for more credits (see the payments plugin).
        'access-control-allow-headers': 'content-type, authorization, payment-signature',
        'access-control-max-age': '86400',
      });
      res.end();
      return true;
    }
    if (req.method !== 'POST') return this.#refuse(req, res, Errors.HTTP_METHOD_NOT_ALLOWED, { allow: 'POST' }), true;
    if (!isJsonContentType(req.headers['content-type'])) return this.#refuse(req, res, Errors.UNSUPPORTED_MEDIA_TYPE), true;
    if (this.#closing) return this.#refuseWhileClosing(req, res, gateway.config.server.maxBodyBytes), true;

    this.#inFlight.track(res);
    const cors = this.#corsFor(req);
    collectBody(
      req,
      res,
      gateway.config.server.maxBodyBytes,
      (body) => {
        const subscription = gateway
          .jsonRpc({
            transport: this.name,
            network: addressed.network,
            credentials: { apiKey, keyHint: KEY_HINT },
            body,
            meta: {
              origin: req.headers.origin,
              userAgent: req.headers['user-agent'],
              remoteAddress: clientAddress(req, gateway.config.server.trustedProxies),
              headers: req.headers,
            },
          })
          .subscribe((output) => this.#send(res, output, cors));
        // A client that disconnects before its answer cancels the calls: upstream requests aborted, refunded.
        // A response emits 'close' once, so `on` serves without `once`'s wrapper and removal.
        if (!subscription.closed) res.on('close', () => subscription.unsubscribe());
      },
      (error: unknown) => {
        if (error instanceof BodyTooLargeError) {
          const refusal = new GatewayError(Errors.BODY_TOO_LARGE, { message: `request body exceeds ${error.limit} bytes` });
          refuseBody(req, res, refusal.httpStatus, { ...cors, 'content-type': 'application/json' }, encodeError(null, refusal.toJSON()));
        } else {
          res.destroy();
        }
      },
    );
    return true;
  }

  /** Refuses new calls (503) and waits up to the drain timeout for calls in flight to be answered. */
  async close(): Promise<void> {
    this.#closing = true;
    await this.#inFlight.drain(this.#drainTimeoutMs);
  }

  /**
   * The CORS headers for an answer to `req`: only a request with an `Origin` gets them, since a browser
   * sends one on every cross-origin request and a server-side client (most of the traffic) reads none of
   * them; each header left out is work saved in writing every answer.
   */
  #corsFor(req: IncomingMessage): Record<string, string> {
    return req.headers.origin === undefined ? NO_HEADERS : this.#cors;
  }

  // One writeHead with every header, and no setHeader before it: Node then takes the object as is. The
  // object is filled by loops, not spread: spreading headers of varying shapes cost about 1 us per answer.
  #send(res: ServerResponse, output: JsonRpcOutput, cors: Record<string, string>): void {
    if (res.destroyed) return;
    const head: OutgoingHttpHeaders = {};
    for (const name in cors) head[name] = cors[name];
    const headers = output.headers;
    for (const name in headers) head[name] = headers[name];
    const body = output.body;
    if (body === undefined) {
      res.writeHead(output.status, head);
      res.end();
      return;
    }
    head['content-type'] = 'application/json';
    head['content-length'] = Buffer.byteLength(body);
    res.writeHead(output.status, head);
    res.end(body);
  }

  // The body is read (within the size limit) so that the refusal answers each request by its id.
  #refuseWhileClosing(req: IncomingMessage, res: ServerResponse, limit: number): void {
    const headers = { 'retry-after': '1', connection: 'close' };
    const message = 'the gateway is shutting down';
    collectBody(req, res, limit, (body) => {
      const asked = requestIds(body);
      if (!asked.batch || asked.ids.length === 0) return this.#refuse(req, res, Errors.UPSTREAM_UNAVAILABLE, headers, message, asked.batch ? null : asked.id);
      const error = new GatewayError(Errors.UPSTREAM_UNAVAILABLE, { message });
      const answer = `[${asked.ids.map((id) => encodeError(id, error.toJSON())).join(',')}]`;
      res.writeHead(error.httpStatus, { ...this.#corsFor(req), ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(answer) });
      res.end(answer);
    }, () => this.#refuse(req, res, Errors.UPSTREAM_UNAVAILABLE, headers, message));
  }

  #refuse(req: IncomingMessage, res: ServerResponse, entry: ErrorEntry, headers: Record<string, string> = {}, message?: string, id: JsonRpcId = null): void {
    const error = new GatewayError(entry, message === undefined ? {} : { message });
    const body = encodeError(id, error.toJSON());
    res.writeHead(error.httpStatus, { ...this.#corsFor(req), ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  }
}
