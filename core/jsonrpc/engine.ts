import { defer, from, map, mergeMap, of, toArray, type Observable } from 'rxjs';
import type { Credentials, RequestContext, RequestMeta } from '../context.js';
import { Errors } from '../errors/catalog.js';
import { GatewayError } from '../errors/gateway-error.js';
import type { Network } from '../network.js';
import type { ContextInit } from '../runtime.js';
import { encodeError } from './encode.js';
import type { JsonRpcId } from './types.js';

/** A JSON-RPC body addressed to a network. */
export interface JsonRpcInput {
  /** Transport name. */
  readonly transport: string;
  /** The addressed network. */
  readonly network: Network;
  /** The client's credentials. */
  readonly credentials: Credentials;
  /** The body: raw bytes or text as received, or an already parsed value. */
  readonly body: Uint8Array | string | unknown;
  /** Facts about the client connection. */
  readonly meta?: RequestMeta;
  /** Aborts the calls (client gone). */
  readonly signal?: AbortSignal;
}

/** What to answer a JSON-RPC body with. */
export interface JsonRpcOutput {
  /** HTTP status (transports without statuses may ignore it). */
  readonly status: number;
  /** Response headers (`retry-after`, the served-by header). */
  readonly headers: Record<string, string>;
  /** The response body; undefined when there is nothing to answer (only notifications). */
  readonly body: string | Buffer | undefined;
  /** The calls' contexts, in request order (for logs and metrics). */
  readonly contexts: readonly RequestContext[];
}

/** The engine's dependencies. */
export interface JsonRpcEngineDeps {
  /** Creates a context. */
  readonly createContext: (init: ContextInit) => RequestContext;
  /** Runs a context through the pipeline. */
  readonly execute: (ctx: RequestContext) => Observable<RequestContext>;
  /** Largest accepted batch. */
  readonly maxBatchSize: number;
  /** Calls of one batch run at once. */
  readonly batchConcurrency: number;
  /** Whether to name the serving upstream in a header. */
  readonly servedByHeader: boolean;
}

/** The name of the header that tells which upstream served a call. */
export const SERVED_BY_HEADER = 'x-tollgate-upstream';

type Parsed = { ok: true; value: unknown; raw: Uint8Array | undefined } | { ok: false; error: GatewayError };

function parseBody(body: Uint8Array | string | unknown): Parsed {
  if (typeof body !== 'string' && !(body instanceof Uint8Array)) return { ok: true, value: body, raw: undefined };
  const text = typeof body === 'string' ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8');
  try {
    return { ok: true, value: JSON.parse(text), raw: typeof body === 'string' ? Buffer.from(body) : body };
  } catch {
    return { ok: false, error: new GatewayError(Errors.PARSE_ERROR) };
  }
}

function isRequestObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isValidId(id: unknown): id is JsonRpcId | undefined {
  return id === undefined || id === null || typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id));
}

/** An item of the request that is not a valid call: answered with an error, never sent through the pipeline. */
interface InvalidItem {
  readonly invalid: GatewayError;
  readonly id: JsonRpcId;
}

function readItem(value: unknown): { method: string; params: unknown; id: JsonRpcId | undefined } | InvalidItem {
  if (!isRequestObject(value)) return { invalid: new GatewayError(Errors.INVALID_REQUEST, { message: 'invalid request: not a JSON-RPC request object' }), id: null };
  const id = value.id;
  if (!isValidId(id)) return { invalid: new GatewayError(Errors.INVALID_REQUEST, { message: 'invalid request: id must be a number, a string or null' }), id: null };
  if (value.jsonrpc !== '2.0') return { invalid: new GatewayError(Errors.INVALID_REQUEST, { message: 'invalid request: jsonrpc must be "2.0"' }), id: id ?? null };
  if (typeof value.method !== 'string' || value.method === '') return { invalid: new GatewayError(Errors.INVALID_REQUEST, { message: 'invalid request: method must be a non-empty string' }), id: id ?? null };
  const params = value.params;
  if (params !== undefined && (typeof params !== 'object' || params === null)) {
    return { invalid: new GatewayError(Errors.INVALID_REQUEST, { message: 'invalid request: params must be an array or an object' }), id: id ?? null };
  }
  return { method: value.method, params, id };
}

function errorOutput(error: GatewayError, id: JsonRpcId = null): JsonRpcOutput {
  return { status: error.httpStatus, headers: { ...error.headers }, body: encodeError(id, error.toJSON()), contexts: [] };
}

function answer(ctx: RequestContext): string | Buffer {
  if (ctx.error !== undefined) return encodeError(ctx.call.id, ctx.error.toJSON());
  const body = ctx.reply!.body as Uint8Array;
  // Upstream bodies are already Buffers; wrapping (not copying) keeps the node's bytes as they came.
  return Buffer.isBuffer(body) ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength);
}

/**
 * Builds the JSON-RPC handler shared by every transport: parses a single call or a batch, runs each call
 * through the pipeline (batch calls concurrently, answered in request order, each charged on its own),
 * and assembles the response.
 *
 * Status rules: a single call answers with its error's HTTP status (200 when it succeeded or failed at
 * the node); a batch answers 200 unless every call failed with the same status, which the batch then
 * takes. Notifications are executed and charged like any call but get no body (HTTP 204 when nothing
 * else is answered).
 */
export function createJsonRpcEngine(deps: JsonRpcEngineDeps): (input: JsonRpcInput) => Observable<JsonRpcOutput> {
  const contextFor = (input: JsonRpcInput, item: { method: string; params: unknown; id: JsonRpcId | undefined }, raw: Uint8Array | undefined): RequestContext =>
    deps.createContext({
      transport: input.transport,
      network: input.network,
      credentials: input.credentials,
      meta: input.meta,
      signal: input.signal,
      call: { method: item.method, params: item.params, id: item.id, raw },
    });

  const servedBy = (contexts: readonly RequestContext[], headers: Record<string, string>): void => {
    if (!deps.servedByHeader) return;
    if (contexts.length === 1) {
      const upstream = contexts[0]!.servedBy;
      if (upstream !== undefined) headers[SERVED_BY_HEADER] = upstream.name;
      return;
    }
    const names = new Set<string>();
    for (const ctx of contexts) if (ctx.servedBy !== undefined) names.add(ctx.servedBy.name);
    if (names.size > 0) headers[SERVED_BY_HEADER] = [...names].join(', ');
  };

  const singleOutput = (ctx: RequestContext): JsonRpcOutput => {
    const headers: Record<string, string> = ctx.error?.headers === undefined ? {} : { ...ctx.error.headers };
    servedBy([ctx], headers);
    const status = ctx.error?.httpStatus ?? 200;
    if (ctx.call.id === undefined) return { status: status === 200 ? 204 : status, headers, body: undefined, contexts: [ctx] };
    return { status, headers, body: answer(ctx), contexts: [ctx] };
  };

  const single = (input: JsonRpcInput, value: unknown, raw: Uint8Array | undefined): Observable<JsonRpcOutput> => {
    const item = readItem(value);
    if ('invalid' in item) return of(errorOutput(item.invalid, item.id));
    return deps.execute(contextFor(input, item, raw)).pipe(map(singleOutput));
  };

  const batch = (input: JsonRpcInput, values: unknown[]): Observable<JsonRpcOutput> => {
    if (values.length === 0) return of(errorOutput(new GatewayError(Errors.INVALID_REQUEST, { message: 'invalid request: empty batch' })));
    if (values.length > deps.maxBatchSize) {
      return of(errorOutput(new GatewayError(Errors.BATCH_TOO_LARGE, { message: `batch of ${values.length} calls exceeds the limit of ${deps.maxBatchSize}` })));
    }
    const items = values.map(readItem);
    return from(items.map((item, index) => ({ item, index }))).pipe(
      mergeMap(({ item, index }) =>
        'invalid' in item ? of({ index, ctx: undefined, item }) : deps.execute(contextFor(input, item, undefined)).pipe(map((ctx) => ({ index, ctx, item }))),
      deps.batchConcurrency),
      toArray(),
      map((done) => {
        done.sort((a, b) => a.index - b.index);
        const parts: Array<string | Buffer> = [];
        const contexts: RequestContext[] = [];
        const statuses = new Set<number>();
        const headers: Record<string, string> = {};
        for (const { ctx, item } of done) {
          if (ctx === undefined) {
            const invalid = item as InvalidItem;
            parts.push(encodeError(invalid.id, invalid.invalid.toJSON()));
            statuses.add(200);
            continue;
          }
          contexts.push(ctx);
          statuses.add(ctx.error?.httpStatus ?? 200);
          if (ctx.error?.headers !== undefined) Object.assign(headers, ctx.error.headers);
          if (ctx.call.id !== undefined) parts.push(answer(ctx));
        }
        servedBy(contexts, headers);
        const status = statuses.size === 1 ? [...statuses][0]! : 200;
        if (parts.length === 0) return { status: status === 200 ? 204 : status, headers, body: undefined, contexts };
        const chunks: Buffer[] = [Buffer.from('[')];
        parts.forEach((part, i) => {
          if (i > 0) chunks.push(Buffer.from(','));
          chunks.push(typeof part === 'string' ? Buffer.from(part) : part);
        });
        chunks.push(Buffer.from(']'));
        return { status, headers, body: Buffer.concat(chunks), contexts };
      }),
    );
  };

  return (input) =>
    defer(() => {
      const parsed = parseBody(input.body);
      if (!parsed.ok) return of(errorOutput(parsed.error));
      return Array.isArray(parsed.value) ? batch(input, parsed.value) : single(input, parsed.value, parsed.raw);
    });
}
