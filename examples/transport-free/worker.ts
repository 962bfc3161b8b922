/**
 * Tollgate called without a transport, in the shape of a serverless function and of a queue worker.
 *
 * `gateway.handle({ network, apiKey, body })` runs a JSON-RPC call or batch through the whole pipeline
 * (key, schema, credits, limits, upstream) and returns a lazy RxJS Observable that emits one
 * `{ status, headers, body, contexts }` and completes; it never errors (a failure is a JSON-RPC error
 * in `body`, with its HTTP status in `status`). Everything here is composed from that Observable.
 */
import { firstValueFrom, from, map, mergeMap, of, timeout, type Observable, type ObservableInput } from 'rxjs';
import { encodeError } from 'tollgate/transport';
import { Errors, type Gateway, type JsonRpcOutput } from 'tollgate';
import { type RequestContext } from 'tollgate/plugin';
import { demoGateway, NETWORK } from './gateway.js';

/** What the function is invoked with: the API key and the JSON-RPC body, as a platform or a queue delivers them. */
export interface RpcEvent {
  /** The API key (from the URL path, a header or the message). */
  readonly apiKey: string;
  /** The network (default `eth`). */
  readonly network?: string;
  /** A JSON-RPC request or batch: JSON text (as HTTP platforms deliver bodies) or an already parsed value. */
  readonly body: unknown;
}

/** What the function returns, in the shape serverless platforms expect of an HTTP function. */
export interface RpcResult {
  readonly statusCode: number;
  readonly headers: Record<string, string>;
  /** The JSON-RPC response; empty when the request held only notifications (status 204). */
  readonly body: string;
}

/** One message of a job queue: an event with an id to report the outcome under. */
export interface Job extends RpcEvent {
  readonly id: string;
}

/** The outcome of a job. */
export interface JobResult {
  readonly id: string;
  /** The HTTP status the call would have had. */
  readonly status: number;
  /** The JSON-RPC response, parsed (undefined for notifications only). */
  readonly response: unknown;
  /** Credits charged for the job's calls (a refused or failed call costs nothing). */
  readonly credits: number;
}

/** Worker settings. */
export interface WorkerOptions {
  /** How long one event may take before the handler answers 504 itself, ms (default 15,000). */
  readonly timeoutMs?: number;
  /** The transport name recorded on each call (default `serverless`). */
  readonly transport?: string;
}

/** The entry points built over one gateway. */
export interface Worker {
  /** The serverless handler: one event, one promised result. */
  handler(event: RpcEvent): Promise<RpcResult>;
  /** The same, as a lazy Observable (nothing runs until it is subscribed). */
  respond(event: RpcEvent): Observable<RpcResult>;
  /** Runs queue jobs, at most `concurrency` at once, emitting each result as it finishes. */
  runJobs(jobs: ObservableInput<Job>, concurrency?: number): Observable<JobResult>;
}

/** Credits that stood for a finished call: its debit, unless the call failed (and was refunded). */
export function creditsOf(contexts: readonly RequestContext[]): number {
  return contexts.reduce((sum, ctx) => sum + (ctx.error === undefined && ctx.debit !== undefined ? ctx.debit.credits : 0), 0);
}

function timedOut(ms: number): JsonRpcOutput {
  const error = { code: Errors.UPSTREAM_TIMEOUT.code, message: `no answer within ${ms} ms` };
  return { status: Errors.UPSTREAM_TIMEOUT.httpStatus, headers: {}, body: encodeError(null, error), contexts: [] };
}

function toResult(output: JsonRpcOutput): RpcResult {
  if (output.body === undefined) return { statusCode: output.status, headers: { ...output.headers }, body: '' };
  return { statusCode: output.status, headers: { 'content-type': 'application/json', ...output.headers }, body: output.body.toString() };
}

/** Builds the handler and the queue worker over a gateway (created on first use by `gateway()`). */
export function createWorker(gateway: () => Promise<Pick<Gateway, 'handle'>>, options: WorkerOptions = {}): Worker {
  const timeoutMs = options.timeoutMs ?? 15_000;
  const transport = options.transport ?? 'serverless';

  // One event through the gateway. `timeout` covers the call, not the cold start of the gateway.
  const run = (event: RpcEvent, name: string): Observable<JsonRpcOutput> =>
    from(gateway()).pipe(
      mergeMap((gw) =>
        gw.handle({ network: event.network ?? NETWORK, apiKey: event.apiKey, body: event.body, transport: name })
          .pipe(timeout({ first: timeoutMs, with: () => of(timedOut(timeoutMs)) })),
      ),
    );

  const respond = (event: RpcEvent): Observable<RpcResult> => run(event, transport).pipe(map(toResult));

  return {
    respond,
    handler: (event) => firstValueFrom(respond(event)),
    runJobs: (jobs, concurrency = 4) =>
      from(jobs).pipe(
        mergeMap(
          (job) =>
            run(job, 'queue').pipe(
              map((output): JobResult => ({
                id: job.id,
                status: output.status,
                response: output.body === undefined ? undefined : JSON.parse(output.body.toString()),
                credits: creditsOf(output.contexts),
              })),
            ),
          concurrency,
        ),
      ),
  };
}

const worker = createWorker(demoGateway);

/** The serverless function: `handler({ apiKey, body })` → `{ statusCode, headers, body }`. */
export const handler = worker.handler;
/** {@link handler} as an Observable. */
export const respond = worker.respond;
/** The queue worker over the demo gateway. */
export const runJobs = worker.runJobs;
