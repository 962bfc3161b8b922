import { Observable, defer, finalize, from, map, mergeMap, of, toArray, type Observer, type Subscriber, type TeardownLogic } from 'rxjs';
import type { RequestContext } from '../contracts/request-context.js';
import type { JsonRpcInput, JsonRpcOutput } from '../contracts/json-rpc-io.js';
import { Errors } from '../errors/catalog.js';
import { GatewayError } from '../errors/gateway-error.js';
import type { ContextInit } from '../contracts/runtime.js';
import { encodeError } from './encode.js';
import { ClientBatch } from './client-batch.js';
import type { JsonRpcId } from '../contracts/json-rpc.js';
import { replyOf } from '../context/context-access.js';

export type { JsonRpcInput, JsonRpcOutput };


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

/** HTTP 402: a batch nothing of which was answered takes it when one of its calls got it. */
const PAYMENT_REQUIRED = 402;

type Parsed = { ok: true; value: unknown; raw: Uint8Array | undefined } | { ok: false; error: GatewayError };

function parseBody(body: Uint8Array | string | unknown): Parsed {
  if (typeof body !== 'string' && !(body instanceof Uint8Array)) return { ok: true, value: body, raw: undefined };
  const text = typeof body === 'string' ? body : Buffer.isBuffer(body) ? body.toString('utf8') : Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8');
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
  const body = replyOf(ctx).body as Uint8Array;
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
 * takes, or no call of it was answered (each failed with a gateway error, none was served) and one
 * failed with a 402: the batch answers 402, with every header its calls' errors carry (an offer of more
 * credits among them), since a client that acts on it (pays, say) may send the whole batch again. A
 * batch some of whose calls were answered answers 200; its refused calls' errors keep their `data`, and
 * their headers are sent too. Notifications are executed and charged like any call but get no body (HTTP 204 when nothing
 * else is answered).
 */
export function createJsonRpcEngine(deps: JsonRpcEngineDeps): (input: JsonRpcInput) => Observable<JsonRpcOutput> {
  const contextFor = (input: JsonRpcInput, item: { method: string; params: unknown; id: JsonRpcId | undefined }, raw: Uint8Array | undefined, batch?: ClientBatch): RequestContext =>
    deps.createContext({
      transport: input.transport,
      network: input.network,
      credentials: input.credentials,
      meta: input.meta,
      call: { method: item.method, params: item.params, id: item.id, raw },
      ...(batch === undefined ? {} : { batch }),
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

  // A batch answers with the distinct values each header had across its calls, in request order.
  const replyHeaders = (contexts: readonly RequestContext[], headers: Record<string, string>): void => {
    let values: Map<string, Set<string>> | undefined;
    for (const ctx of contexts) {
      if (ctx.replyHeaders === undefined) continue;
      values ??= new Map();
      for (const [name, value] of Object.entries(ctx.replyHeaders)) {
        let set = values.get(name);
        if (set === undefined) values.set(name, (set = new Set()));
        set.add(value);
      }
    }
    if (values !== undefined) for (const [name, set] of values) headers[name] = [...set].join(', ');
  };

  const singleOutput = (ctx: RequestContext): JsonRpcOutput => {
    const headers: Record<string, string> = ctx.error?.headers === undefined ? {} : { ...ctx.error.headers };
    if (ctx.replyHeaders !== undefined) Object.assign(headers, ctx.replyHeaders);
    servedBy([ctx], headers);
    const status = ctx.error?.httpStatus ?? 200;
    if (ctx.call.id === undefined) return { status: status === 200 ? 204 : status, headers, body: undefined, contexts: [ctx] };
    return { status, headers, body: answer(ctx), contexts: [ctx] };
  };

  const single = (input: JsonRpcInput, value: unknown, raw: Uint8Array | undefined, made: RequestContext[] | undefined): Observable<JsonRpcOutput> => {
    const item = readItem(value);
    if ('invalid' in item) return of(errorOutput(item.invalid, item.id));
    return deps.execute(track(contextFor(input, item, raw), input.signal, made)).pipe(map(singleOutput));
  };

  const batch = (input: JsonRpcInput, values: unknown[], made: RequestContext[] | undefined): Observable<JsonRpcOutput> => {
    if (values.length === 0) return of(errorOutput(new GatewayError(Errors.INVALID_REQUEST, { message: 'invalid request: empty batch' })));
    if (values.length > deps.maxBatchSize) {
      return of(errorOutput(new GatewayError(Errors.BATCH_TOO_LARGE, { message: `batch of ${values.length} calls exceeds the limit of ${deps.maxBatchSize}` })));
    }
    const items = values.map(readItem);
    // The batch's calls bound for the same upstream reach it in one request (see ClientBatch).
    const group = new ClientBatch();
    const run = (item: { method: string; params: unknown; id: JsonRpcId | undefined }): Observable<RequestContext> =>
      defer(() => {
        group.enter();
        return deps.execute(track(contextFor(input, item, undefined, group), input.signal, made)).pipe(finalize(() => group.leave()));
      });
    return from(items.map((item, index) => ({ item, index }))).pipe(
      mergeMap(({ item, index }) => ('invalid' in item ? of({ index, ctx: undefined, item }) : run(item).pipe(map((ctx) => ({ index, ctx, item })))), deps.batchConcurrency),
      toArray(),
      map((done) => {
        done.sort((a, b) => a.index - b.index);
        const parts: Array<string | Buffer> = [];
        const contexts: RequestContext[] = [];
        const statuses = new Set<number>();
        let answered = false;
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
          if (ctx.error === undefined) answered = true;
          if (ctx.error?.headers !== undefined) Object.assign(headers, ctx.error.headers);
          if (ctx.call.id !== undefined) parts.push(answer(ctx));
        }
        replyHeaders(contexts, headers);
        servedBy(contexts, headers);
        const status = statuses.size === 1 ? [...statuses][0]! : !answered && statuses.has(PAYMENT_REQUIRED) ? PAYMENT_REQUIRED : 200;
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

  // One call without an outer signal (the usual request) is answered straight from the pipeline's
  // observable: no defer, no operator between them.
  const direct = (input: JsonRpcInput, value: unknown, raw: Uint8Array | undefined, subscriber: Subscriber<JsonRpcOutput>): TeardownLogic => {
    const item = readItem(value);
    if ('invalid' in item) {
      subscriber.next(errorOutput(item.invalid, item.id));
      subscriber.complete();
      return undefined;
    }
    return deps.execute(contextFor(input, item, raw)).subscribe(new SingleAnswer(subscriber, singleOutput));
  };

  return (input) =>
    new Observable<JsonRpcOutput>((subscriber) => {
      const parsed = parseBody(input.body);
      if (!parsed.ok) {
        subscriber.next(errorOutput(parsed.error));
        subscriber.complete();
        return undefined;
      }
      const signal = input.signal;
      if (signal === undefined) {
        return Array.isArray(parsed.value) ? batch(input, parsed.value, undefined).subscribe(subscriber) : direct(input, parsed.value, parsed.raw, subscriber);
      }
      // One listener per input, not per call, removed when the answer is out.
      const made: RequestContext[] = [];
      const onAbort = (): void => { for (const ctx of made) ctx.cancel(signal.reason); };
      signal.addEventListener('abort', onAbort, { once: true });
      const output = Array.isArray(parsed.value) ? batch(input, parsed.value, made) : single(input, parsed.value, parsed.raw, made);
      return output.pipe(finalize(() => signal.removeEventListener('abort', onAbort))).subscribe(subscriber);
    });
}

/** Hands a single call's finished context to the subscriber as its output. */
class SingleAnswer implements Observer<RequestContext> {
  constructor(
    readonly subscriber: Subscriber<JsonRpcOutput>,
    readonly output: (ctx: RequestContext) => JsonRpcOutput,
  ) {}

  next(ctx: RequestContext): void {
    this.subscriber.next(this.output(ctx));
  }

  error(error: unknown): void {
    this.subscriber.error(error);
  }

  complete(): void {
    this.subscriber.complete();
  }
}

/** Cancels a call made for an input whose signal already aborted; otherwise keeps it for a later abort. */
function track(ctx: RequestContext, signal: AbortSignal | undefined, made: RequestContext[] | undefined): RequestContext {
  if (signal?.aborted === true) ctx.cancel(signal.reason);
  else made?.push(ctx);
  return ctx;
}
