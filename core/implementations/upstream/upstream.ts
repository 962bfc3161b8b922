import { Pool } from 'undici';
import type { Upstream, UpstreamReply, UpstreamRequest, UpstreamSettings } from '../../model/context.js';
import { classifyTransportError } from '../../leaves/upstream-failure.js';
import { NEVER_ABORTED } from '../call-context.js';

/**
 * An upstream node reached over HTTP through an undici keep-alive pool. It only moves bytes; which
 * upstream to use and what to do when one fails is decided by the route and dispatch stages.
 */
export class PooledUpstream implements Upstream {
  /** The upstream's settings. */
  readonly settings: UpstreamSettings;
  /** Calls currently waiting on this upstream. */
  inFlight = 0;
  readonly #pool: Pool;
  readonly #path: string;
  readonly #headers: Record<string, string>;

  constructor(settings: UpstreamSettings) {
    this.settings = settings;
    const url = new URL(settings.url);
    this.#path = url.pathname + url.search;
    this.#headers = { 'content-type': 'application/json', ...settings.headers };
    if (url.username !== '' || url.password !== '') {
      const auth = Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString('base64');
      this.#headers.authorization ??= `Basic ${auth}`;
    }
    this.#pool = new Pool(url.origin, {
      connections: settings.connections,
      keepAliveTimeout: settings.keepAliveTimeoutMs,
      connect: { timeout: settings.connectTimeoutMs },
      pipelining: 1,
    });
  }

  /** The upstream's name. */
  get name(): string {
    return this.settings.name;
  }

  /** Primary or partner. */
  get role(): 'primary' | 'partner' {
    return this.settings.role;
  }

  /** Relative capacity among the network's primaries. */
  get weight(): number {
    return this.settings.weight ?? 1;
  }

  /**
   * Sends one request and returns the answer, whatever its HTTP status. `timeoutMs` and `signal`, when
   * given, take precedence over the request's own (so a caller retrying one request on several upstreams
   * does not build a new request object per attempt).
   *
   * @throws UpstreamFailure when no answer arrived (connect error, reset, timeout).
   */
  async request(request: UpstreamRequest, timeoutMs?: number, signal?: AbortSignal): Promise<UpstreamReply> {
    const timeout = timeoutMs ?? request.timeoutMs ?? this.settings.timeoutMs;
    this.inFlight++;
    try {
      const response = await this.#pool.request({
        path: request.path === undefined ? this.#path : joinPath(this.#path, request.path),
        method: request.method ?? 'POST',
        headers: request.headers === undefined ? this.#headers : { ...this.#headers, ...request.headers },
        body: request.body as Uint8Array | string | undefined,
        headersTimeout: timeout,
        bodyTimeout: timeout,
        signal: effectiveSignal(signal ?? request.signal),
      });
      if (request.stream === true) {
        // undici fills `trailers` once the body has been read: a streaming relay reads them at the end.
        return { status: response.statusCode, headers: response.headers, body: response.body, trailers: response.trailers };
      }
      const body = Buffer.from(await response.body.arrayBuffer());
      return { status: response.statusCode, headers: response.headers, body };
    } catch (error) {
      throw classifyTransportError(error);
    } finally {
      this.inFlight--;
    }
  }

  /** Closes the pool, letting requests in flight finish. */
  async close(): Promise<void> {
    await this.#pool.close();
  }
}

function effectiveSignal(signal: AbortSignal | undefined): AbortSignal | undefined {
  return signal === NEVER_ABORTED ? undefined : signal;
}

function joinPath(base: string, path: string): string {
  if (base === '/' || base === '') return path;
  return base.replace(/\/$/, '') + path;
}
