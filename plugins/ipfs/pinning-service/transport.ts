import type { IncomingMessage, ServerResponse } from 'node:http';
import { clientAddress, InFlightResponses, SERVED_BY_HEADER, type GatewayRuntime, type Transport } from '../../../core/transport-api.js';
import { Errors, GatewayError, type Network, type RequestContext } from '../../../core/plugin-api.js';
import { isIpfsNetwork } from '../family.js';
import type { ResolvedIpfsSettings } from '../settings.js';
import { failureBody, failureOf } from './failure.js';
import { allowedOf, bearerCredentials, operationOf, pinQueryOf, pinsTarget, readJsonBody, type PinsTarget } from './http-input.js';
import { PsaMethod, PSA_TRANSPORT, type PsaMethodName } from './methods.js';

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/**
 * The IPFS Pinning Service API (v1.0.0) of a network of the `ipfs` family: `GET/POST {network base}/pins`
 * and `GET/POST/DELETE {network base}/pins/{requestid}`, so the service endpoint a client is given is the
 * network's base. The bearer token is the API key and its secret, `<API_KEY>:<API_SECRET>`, checked as
 * the file API's basic credentials are. Each request is one call through the pipeline (secret check,
 * plan access, request-rate limits, credits), served by the `ipfsPinningService` stage; every refusal is
 * the spec's `Failure` (`{"error":{"reason","details"}}`).
 */
export class PinningServiceTransport implements Transport {
  /** {@link PSA_TRANSPORT}: the calls' transport, to which the API's methods are restricted. */
  readonly name = PSA_TRANSPORT;
  readonly #settings: ResolvedIpfsSettings;
  readonly #cors: Record<string, string>;
  readonly #inFlight = new InFlightResponses();
  readonly #jobsIdle: () => Promise<void>;
  readonly #jobsStop: () => void;
  #closing = false;

  /**
   * `jobsIdle`: resolves once the node's work on pin requests in flight is done (waited for on close);
   * `jobsStop`: tells that work the gateway stops (what is cut short then is left for the next gateway).
   */
  constructor(settings: ResolvedIpfsSettings, jobsIdle: () => Promise<void> = () => Promise.resolve(), jobsStop: () => void = () => undefined) {
    this.#settings = settings;
    this.#jobsIdle = jobsIdle;
    this.#jobsStop = jobsStop;
    this.#cors = settings.corsOrigin === false ? {} : { 'access-control-allow-origin': settings.corsOrigin };
  }

  /** Claims `/pins` and `/pins/{requestid}` under the base of a network of the `ipfs` family. */
  handleRequest(req: IncomingMessage, res: ServerResponse, gateway: GatewayRuntime): boolean {
    const url = req.url ?? '/';
    const addressed = gateway.networks.resolve(req.headers.host, url);
    if (addressed === undefined || !isIpfsNetwork(addressed.network)) return false;
    const target = pinsTarget(addressed.rest);
    if (target === undefined) return false;

    if (req.method === 'OPTIONS' && this.#cors['access-control-allow-origin'] !== undefined) {
      res.writeHead(204, {
        ...this.#cors,
        'access-control-allow-methods': allowedOf(target),
        'access-control-allow-headers': 'authorization, content-type',
        'access-control-max-age': '86400',
      });
      res.end();
      return true;
    }
    const method = operationOf(req.method, target);
    if (method === undefined) {
      this.#fail(req, res, new GatewayError(Errors.HTTP_METHOD_NOT_ALLOWED, { message: `${req.method ?? ''} is not an operation of this path (${allowedOf(target)})`, headers: { allow: allowedOf(target) } }));
      return true;
    }
    if (this.#closing) return this.#fail(req, res, new GatewayError(Errors.UPSTREAM_UNAVAILABLE, { message: 'the gateway is shutting down', headers: { 'retry-after': '1', connection: 'close' } })), true;
    const credentials = bearerCredentials(headerValue(req.headers.authorization));
    if (credentials === undefined) return this.#fail(req, res, new GatewayError(Errors.UNAUTHORIZED, { message: 'missing access token: send Authorization: Bearer <API key>:<API secret>' })), true;

    this.#inFlight.track(res);
    const query = url.indexOf('?') === -1 ? '' : url.slice(url.indexOf('?') + 1);
    void this.#params(req, method, target, new URLSearchParams(query), gateway).then(
      (params) => this.#call(req, res, gateway, addressed.network, method, params, credentials),
      (error: unknown) => this.#fail(req, res, GatewayError.is(error) ? error : new GatewayError(Errors.INTERNAL_ERROR, { cause: error })),
    );
    return true;
  }

  /**
   * Refuses new requests and waits up to `drainTimeoutMs` for requests in flight and the node's work on
   * pin requests; pin requests the node is still working on then stay `queued`/`pinning` in the store,
   * and are taken up by the next gateway their key calls.
   */
  async close(): Promise<void> {
    this.#closing = true;
    await this.#inFlight.drain(this.#settings.drainTimeoutMs);
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, this.#settings.drainTimeoutMs)));
    await Promise.race([this.#jobsIdle(), late]);
    clearTimeout(timer);
    // The node requests still in flight end with the gateway: their pin requests stay unfinished.
    this.#jobsStop();
  }

  async #params(req: IncomingMessage, method: PsaMethodName, target: PinsTarget, search: URLSearchParams, gateway: GatewayRuntime): Promise<unknown[]> {
    switch (method) {
      case PsaMethod.list:
        req.resume();
        return [pinQueryOf(search)];
      case PsaMethod.create:
        return [await readJsonBody(req, gateway.config.server.maxBodyBytes)];
      case PsaMethod.replace:
        return [target.requestId, await readJsonBody(req, gateway.config.server.maxBodyBytes)];
      default:
        req.resume();
        return [target.requestId];
    }
  }

  #call(req: IncomingMessage, res: ServerResponse, gateway: GatewayRuntime, network: Network, method: PsaMethodName, params: unknown[], credentials: { apiKey: string; secret?: string }): void {
    if (res.destroyed) return;
    const ctx = gateway.createContext({
      transport: this.name,
      network,
      credentials,
      call: { method, params },
      meta: { origin: req.headers.origin, userAgent: req.headers['user-agent'], remoteAddress: clientAddress(req, gateway.config.server.trustedProxies), headers: req.headers },
    });
    // A client that leaves before its answer cancels the call, as on every transport.
    const call = gateway.execute(ctx).subscribe((done) => this.#answer(req, res, done, gateway));
    res.once('close', () => {
      if (!res.writableFinished) call.unsubscribe();
    });
  }

  #answer(req: IncomingMessage, res: ServerResponse, ctx: RequestContext, gateway: GatewayRuntime): void {
    if (res.destroyed) return;
    if (ctx.error !== undefined || ctx.reply === undefined) return this.#fail(req, res, ctx.error ?? new GatewayError(Errors.INTERNAL_ERROR));
    const reply = ctx.reply;
    const body = reply.body instanceof Uint8Array ? reply.body : new Uint8Array();
    const headers: Record<string, string> = { ...this.#cors, 'content-length': String(body.byteLength) };
    const type = headerValue(reply.headers['content-type']);
    if (type !== undefined) headers['content-type'] = type;
    if (gateway.config.server.servedByHeader && ctx.servedBy !== undefined) headers[SERVED_BY_HEADER] = ctx.servedBy.name;
    res.writeHead(reply.status, headers);
    res.end(body);
  }

  #fail(req: IncomingMessage, res: ServerResponse, error: GatewayError): void {
    if (res.headersSent) return void res.destroy();
    const failure = failureOf(error);
    const body = failureBody(failure.reason, failure.details);
    const headers: Record<string, string> = { ...this.#cors, ...error.headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) };
    // An unknown key and a wrong secret get the same answer, which says nothing of which keys exist.
    if (failure.status === 401) headers['www-authenticate'] = `Bearer realm="${this.#settings.realm}"`;
    // A body refused before it was read is not read now: the connection closes instead.
    if (!req.readableEnded && req.readableFlowing !== true) headers.connection = 'close';
    res.writeHead(failure.status, headers);
    res.end(body);
  }
}
