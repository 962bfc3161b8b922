import type { IncomingHttpHeaders } from 'node:http';
import { Pool, errors, type Dispatcher } from 'undici';
import type { Upstream, UpstreamReply, UpstreamRequest, UpstreamSettings } from '../contracts/upstream.js';
import { classifyTransportError } from './classify-failure.js';
import type { CancelSignal } from '../contracts/cancel-signal.js';

const { RequestAbortedError } = errors;

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
  request(request: UpstreamRequest, timeoutMs?: number, signal?: CancelSignal): Promise<UpstreamReply> {
    const timeout = timeoutMs ?? request.timeoutMs ?? this.settings.timeoutMs;
    const cancel = signal ?? request.signal;
    const options: Dispatcher.DispatchOptions = {
      path: request.path === undefined ? this.#path : joinPath(this.#path, request.path),
      method: request.method ?? 'POST',
      headers: request.headers === undefined ? this.#headers : { ...this.#headers, ...request.headers },
      body: request.body as Uint8Array | string | undefined,
      headersTimeout: timeout,
      bodyTimeout: timeout,
    };
    if (request.stream === true) return this.#stream(options, cancel);
    this.inFlight++;
    return new Promise<UpstreamReply>((resolve, reject) => {
      this.#pool.dispatch(options, new BufferedReply(this, resolve, reject, cancel));
    });
  }

  /** A streamed answer: undici's Readable, whose `trailers` fill in once the body has been read. */
  async #stream(options: Dispatcher.DispatchOptions, cancel: CancelSignal | undefined): Promise<UpstreamReply> {
    this.inFlight++;
    try {
      const response = await this.#pool.request({ ...options, signal: abortSignalOf(cancel) });
      return { status: response.statusCode, headers: response.headers, body: response.body, trailers: response.trailers };
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

/**
 * Collects one buffered answer from undici's dispatcher: status, headers and the body's chunks (one
 * chunk, the usual case, is kept as it came), without the `request` API's stream, async resource and
 * copy per call. Cancellation aborts the request through undici's controller.
 */
class BufferedReply implements Dispatcher.DispatchHandler {
  readonly #owner: { inFlight: number };
  readonly #resolve: (reply: UpstreamReply) => void;
  readonly #reject: (error: unknown) => void;
  readonly #cancel: CancelSignal | undefined;
  #controller: Dispatcher.DispatchController | undefined = undefined;
  #status = 0;
  #headers: IncomingHttpHeaders = {};
  #chunks: Buffer | Buffer[] | undefined = undefined;
  #size = 0;

  constructor(owner: { inFlight: number }, resolve: (reply: UpstreamReply) => void, reject: (error: unknown) => void, cancel: CancelSignal | undefined) {
    this.#owner = owner;
    this.#resolve = resolve;
    this.#reject = reject;
    this.#cancel = cancel;
    if (cancel !== undefined && !cancel.aborted) cancel.addEventListener('abort', this.#onCancel, { once: true });
  }

  readonly #onCancel = (): void => {
    // Before undici started the request, onRequestStart sees the cancellation and aborts it there.
    this.#controller?.abort(reasonOf(this.#cancel!));
  };

  onRequestStart(controller: Dispatcher.DispatchController): void {
    if (this.#cancel?.aborted === true) return controller.abort(reasonOf(this.#cancel));
    this.#controller = controller;
  }

  onResponseStart(_controller: Dispatcher.DispatchController, status: number, headers: IncomingHttpHeaders): void {
    // An informational answer (1xx) is followed by the real one.
    if (status < 200) return;
    this.#status = status;
    this.#headers = headers;
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.#size += chunk.length;
    const chunks = this.#chunks;
    if (chunks === undefined) this.#chunks = chunk;
    else if (Buffer.isBuffer(chunks)) this.#chunks = [chunks, chunk];
    else chunks.push(chunk);
  }

  onResponseEnd(): void {
    this.#end();
    const chunks = this.#chunks;
    const body = chunks === undefined ? Buffer.alloc(0) : Buffer.isBuffer(chunks) ? chunks : Buffer.concat(chunks, this.#size);
    this.#resolve({ status: this.#status, headers: this.#headers, body });
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    this.#end();
    this.#reject(classifyTransportError(error));
  }

  #end(): void {
    this.#controller = undefined;
    this.#cancel?.removeEventListener('abort', this.#onCancel);
    this.#owner.inFlight--;
  }
}

function reasonOf(signal: CancelSignal): Error {
  return signal.reason instanceof Error ? signal.reason : new RequestAbortedError();
}

/** The rare streamed request takes a standard AbortSignal, made here from a call's cheaper one. */
function abortSignalOf(signal: CancelSignal | undefined): AbortSignal | undefined {
  if (signal === undefined) return undefined;
  if (signal instanceof AbortSignal) return signal;
  const controller = new AbortController();
  if (signal.aborted) controller.abort(signal.reason);
  else signal.addEventListener('abort', () => controller.abort(signal.reason), { once: true });
  return controller.signal;
}

function joinPath(base: string, path: string): string {
  if (base === '/' || base === '') return path;
  return base.replace(/\/$/, '') + path;
}
