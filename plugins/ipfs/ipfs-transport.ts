import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  clientAddress,
  continueBody,
  InFlightResponses,
  refuseBody,
  SERVED_BY_HEADER,
  type GatewayRuntime,
  type Transport,
} from '../../core/transport-api.js';
import {
  Errors,
  GatewayError,
  type RequestContext,
} from '../../core/plugin-api.js';
import { parseBasicAuth } from './basic-auth.js';
import { ipfsCommand, takesUpload } from './commands.js';
import { IPFS_REQUEST } from './context-keys.js';
import { IPFS_TRANSPORT, isIpfsNetwork } from './family.js';
import { KuboErrorCode, kuboErrorBody } from './kubo-errors.js';
import { relay, STREAM_ERROR_TRAILER } from './relay.js';
import type { ResolvedIpfsSettings } from './settings.js';
import { UploadMeter } from './upload-meter.js';
import { UploadBlocks } from './upload-blocks.js';

const API_PREFIX = '/api/v0/';

/** Upstream response headers the client gets (kubo's own; hop-by-hop and length headers are the gateway's). */
const FORWARDED_HEADERS = ['content-type', 'x-stream-output', 'x-chunked-output', 'x-content-length', 'access-control-allow-headers', 'access-control-expose-headers'] as const;

/** How a refusal reaches the client: status, headers and body. */
interface Refusal {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: string;
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/**
 * The file-storage API: kubo's HTTP RPC at `POST {network base}/api/v0/<command>?arg=...`, for networks
 * of the `ipfs` family, authenticated with HTTP basic credentials (user: API key, password: its secret).
 * Each request becomes one call through the pipeline; the upstream's answer is streamed back with
 * backpressure, and bytes served are recorded per key.
 *
 * Status codes: 400 malformed call or argument, 401 (with `WWW-Authenticate`) missing or wrong
 * credentials, 403 plan without the API, 404 unknown command, 405 any method but POST, 429 over the
 * request-rate limit, 500 with kubo's `{"Message","Code","Type"}` body when the call could not be
 * served; an error after streaming began is in the `X-Stream-Error` trailer.
 */
export class IpfsTransport implements Transport {
  readonly name = IPFS_TRANSPORT;
  readonly #settings: ResolvedIpfsSettings;
  readonly #cors: Record<string, string>;
  readonly #inFlight = new InFlightResponses();
  /** Requests whose body is piped to the node (flowing, yet maybe unread when refused). */
  readonly #uploads = new WeakSet<IncomingMessage>();
  #closing = false;

  constructor(settings: ResolvedIpfsSettings) {
    this.#settings = settings;
    this.#cors = settings.corsOrigin === false ? {} : { 'access-control-allow-origin': settings.corsOrigin };
  }

  handleRequest(req: IncomingMessage, res: ServerResponse, gateway: GatewayRuntime): boolean {
    const url = req.url ?? '/';
    const addressed = gateway.networks.resolve(req.headers.host, url);
    if (addressed === undefined || !isIpfsNetwork(addressed.network) || !addressed.rest.startsWith(API_PREFIX)) return false;
    const network = addressed.network;
    const command = addressed.rest.slice(API_PREFIX.length);
    // The Pinning Service API's methods are the family's too, but not commands of this transport.
    const known = network.methods.get(command)?.definition.transports?.includes(IPFS_TRANSPORT) ?? false;

    if (req.method === 'OPTIONS' && this.#cors['access-control-allow-origin'] !== undefined && known) {
      res.writeHead(200, {
        ...this.#cors,
        'access-control-allow-methods': 'POST, OPTIONS',
        'access-control-allow-headers': 'authorization, content-type',
        'access-control-expose-headers': `X-Stream-Output, X-Chunked-Output, X-Content-Length, ${STREAM_ERROR_TRAILER}`,
        'access-control-max-age': '86400',
        'content-length': '0',
      });
      res.end();
      return true;
    }
    if (!known) return this.#text(req, res, 404, '404 page not found\n'), true;
    if (req.method !== 'POST') return this.#text(req, res, 405, '405 - Method Not Allowed\n', { allow: 'OPTIONS, POST' }), true;
    if (this.#closing) return this.#refuse(req, res, new GatewayError(Errors.UPSTREAM_UNAVAILABLE, { message: 'the gateway is shutting down', headers: { 'retry-after': '1', connection: 'close' } })), true;
    const credentials = parseBasicAuth(headerValue(req.headers.authorization));
    if (credentials === undefined) return this.#refuse(req, res, new GatewayError(Errors.UNAUTHORIZED, { message: 'missing credentials: use HTTP basic auth with the API key as user and its secret as password' })), true;

    const query = url.indexOf('?') === -1 ? '' : url.slice(url.indexOf('?') + 1);
    const search = new URLSearchParams(query);
    const args = search.getAll('arg');
    const options: Record<string, string> = {};
    for (const [name, value] of search) if (name !== 'arg' && !(name in options)) options[name] = value;
    const writes = takesUpload(ipfsCommand(command));
    const declared = Number(headerValue(req.headers['content-length']) ?? Number.NaN);
    if (writes && declared > this.#settings.maxUploadBytes) return this.#refuseUpload(req, res), true;
    // Uploads are bounded as they stream (a chunked body declares nothing), by `maxUploadBytes`.
    continueBody(req, res);
    if (!writes) req.resume();
    const contentType = headerValue(req.headers['content-type']);
    const upload = writes ? new UploadMeter(this.#settings.maxUploadBytes, UploadBlocks.of(command, contentType), this.#settings.maxBlocksPerUpload) : undefined;
    if (upload !== undefined) {
      this.#uploads.add(req);
      req.once('error', (error) => upload.destroy(error));
      req.pipe(upload);
    }

    this.#inFlight.track(res);
    const ctx = gateway.createContext({
      transport: this.name,
      network,
      credentials: { apiKey: credentials.user, secret: credentials.password },
      call: { method: command, params: [args, options] },
      meta: { origin: req.headers.origin, userAgent: req.headers['user-agent'], remoteAddress: clientAddress(req, gateway.config.server.trustedProxies), headers: req.headers },
    });
    ctx.state.set(IPFS_REQUEST, { ...(upload === undefined ? {} : { body: upload }), ...(contentType === undefined ? {} : { contentType }) });
    // Cancellation is unsubscription, as on every transport: a client that leaves before the answer
    // stops the call (its upstream request is aborted, its credits refunded). Once the answer streams,
    // the relay ends the upstream stream instead.
    const call = gateway.execute(ctx).subscribe((done) => {
      this.#answer(req, res, done, gateway, upload);
    });
    res.once('close', () => {
      if (!res.writableFinished) call.unsubscribe();
    });
    return true;
  }

  /** Refuses new requests and waits up to `drainTimeoutMs` for streams in flight to finish. */
  async close(): Promise<void> {
    this.#closing = true;
    await this.#inFlight.drain(this.#settings.drainTimeoutMs);
  }

  #answer(req: IncomingMessage, res: ServerResponse, ctx: RequestContext, gateway: GatewayRuntime, upload: UploadMeter | undefined): void {
    // An upload's bytes are metered with what was served: data moved either way.
    const uploaded = (): number => upload?.bytes ?? 0;
    if (res.destroyed) {
      const body = ctx.reply?.body;
      if (ctx.error === undefined && body !== undefined && !(body instanceof Uint8Array)) {
        (body as { destroy?: () => void }).destroy?.();
        // A stream the client left before it began: the call's one usage record, with nothing served.
        gateway.recordStreamedCall(ctx, { bytes: uploaded(), failed: true });
      }
      return;
    }
    if (upload?.exceeded !== undefined) {
      // The node saw a cut upload: whatever it answered, the client hears why.
      const body = ctx.reply?.body;
      if (ctx.error === undefined && body !== undefined && !(body instanceof Uint8Array)) {
        (body as { destroy?: () => void }).destroy?.();
        gateway.recordStreamedCall(ctx, { bytes: uploaded(), failed: true });
      }
      this.#refuseUpload(req, res, upload.exceeded === 'blocks' ? this.#tooManyBlocks() : this.#tooLarge());
      return;
    }
    if (ctx.error !== undefined || ctx.reply === undefined) {
      this.#refuse(req, res, ctx.error ?? new GatewayError(Errors.INTERNAL_ERROR));
      return;
    }
    const reply = ctx.reply;
    const headers: Record<string, string> = { ...this.#cors };
    for (const name of FORWARDED_HEADERS) {
      const value = headerValue(reply.headers[name]);
      if (value !== undefined) headers[name] = value;
    }
    if (gateway.config.server.servedByHeader && ctx.servedBy !== undefined) headers[SERVED_BY_HEADER] = ctx.servedBy.name;
    if (reply.body instanceof Uint8Array) {
      headers['content-length'] = String(reply.body.byteLength);
      res.writeHead(reply.status, headers);
      res.end(reply.body);
      return;
    }
    if (reply.status === 200) headers.trailer = STREAM_ERROR_TRAILER;
    res.writeHead(reply.status, headers);
    void relay(reply.body, res, () => reply.trailers).then((outcome) => {
      if (outcome.error !== undefined && !outcome.clientGone) gateway.logger.warn({ call: ctx.id, network: ctx.network.name, err: outcome.error }, 'upstream stream failed after the answer began');
      // The call's one usage record, now that its bytes are known (the pipeline leaves streamed calls to us).
      gateway.recordStreamedCall(ctx, { bytes: outcome.bytes + uploaded(), failed: outcome.error !== undefined });
    });
  }

  /** 413 for an upload over `maxUploadBytes`: a client still writing reads it while the rest is drained (bounded), then the connection closes. */
  #refuseUpload(req: IncomingMessage, res: ServerResponse, error: GatewayError = this.#tooLarge()): void {
    const refusal = this.#refusal(error);
    refuseBody(req, res, refusal.status, { ...this.#cors, ...refusal.headers, 'content-type': 'application/json' }, refusal.body);
  }

  #tooLarge(): GatewayError {
    return new GatewayError(Errors.BODY_TOO_LARGE, { message: `the upload exceeds ${this.#settings.maxUploadBytes} bytes (maxUploadBytes)` });
  }

  #tooManyBlocks(): GatewayError {
    return new GatewayError(Errors.BODY_TOO_LARGE, { message: `the upload holds more than ${this.#settings.maxBlocksPerUpload} blocks (maxBlocksPerUpload)` });
  }

  #text(req: IncomingMessage, res: ServerResponse, status: number, body: string, headers: Record<string, string> = {}): void {
    req.resume();
    res.writeHead(status, { ...this.#cors, ...headers, 'content-type': 'text/plain; charset=utf-8', 'x-content-type-options': 'nosniff', 'content-length': String(Buffer.byteLength(body)) });
    res.end(body);
  }

  #refuse(req: IncomingMessage, res: ServerResponse, error: GatewayError): void {
    if (error.entry === Errors.METHOD_NOT_FOUND) {
      this.#text(req, res, 404, '404 page not found\n');
      return;
    }
    const refusal = this.#refusal(error);
    // An upload refused before it was read is not read now: the connection closes instead.
    const unread = !req.readableEnded && (req.readableFlowing !== true || this.#uploads.has(req));
    const headers: Record<string, string> = { ...this.#cors, ...error.headers, ...refusal.headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(refusal.body)) };
    if (unread) headers.connection = 'close';
    res.writeHead(refusal.status, headers);
    res.end(refusal.body);
  }

  #refusal(error: GatewayError): Refusal {
    const body = (code: number, message = error.message): string => kuboErrorBody(message, code);
    switch (error.entry) {
      case Errors.UNAUTHORIZED: {
        // An unknown key and a wrong secret get the same answer, which says nothing of which keys exist.
        const message = error.message === Errors.UNAUTHORIZED.message ? 'invalid API key or secret' : error.message;
        return { status: 401, headers: { 'www-authenticate': `Basic realm="${this.#settings.realm}", charset="UTF-8"` }, body: body(KuboErrorCode.Forbidden, message) };
      }
      case Errors.FORBIDDEN:
        return { status: 403, headers: {}, body: body(KuboErrorCode.Forbidden) };
      case Errors.RATE_LIMITED:
      case Errors.CREDITS_EXHAUSTED:
        return { status: error.httpStatus, headers: {}, body: body(KuboErrorCode.RateLimited) };
      case Errors.STORAGE_LIMIT_REACHED:
        // A plan's allowance, like its credits: 402; kubo's Forbidden code, the name in `X-Tollgate-Error`.
        return { status: 402, headers: {}, body: body(KuboErrorCode.Forbidden) };
      case Errors.BODY_TOO_LARGE:
        return { status: 413, headers: {}, body: body(KuboErrorCode.Client) };
      default:
        if (error.httpStatus < 500 || error.entry === Errors.INVALID_PARAMS || error.entry === Errors.LIMIT_EXCEEDED) return { status: 400, headers: {}, body: body(KuboErrorCode.Client) };
        // Whatever kept the gateway from serving the call (no upstream, a timeout): the spec's 500.
        return { status: 500, headers: {}, body: body(KuboErrorCode.Normal) };
    }
  }
}
