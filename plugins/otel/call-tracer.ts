/**
 * Spans of calls: one per call (a child of the client's `traceparent`, when it sends one), with an
 * event as each pipeline stage completes, and one per upstream attempt, a child of the call's.
 *
 * @module
 */
import type { Span, Tracer } from '@opentelemetry/api';
import { otelApi, otelCore } from './peers.js';
import { ContextKey, step, usageOf, type CallObserver, type RequestContext, type StageDefinition } from '../../core/plugin-api.js';
import { type AttemptEnd, type AttemptObserver, type Upstream } from '../../core/upstream-api.js';

/** Where a call's span is kept on its context. */
export const CALL_SPAN = new ContextKey<Span>('otel.callSpan');

/** Name of the stage that opens the call's span; it runs first. */
export const OPEN_SPAN_STAGE = 'otel.open';

const { ROOT_CONTEXT, SpanKind, SpanStatusCode, defaultTextMapGetter, trace } = otelApi;
const propagator = new otelCore.W3CTraceContextPropagator();

/**
 * Opens, annotates and closes the spans of calls and upstream attempts with `tracer`. Also the
 * {@link CallObserver} that ends a call's span and the {@link AttemptObserver} that spans attempts.
 */
export class CallTracer implements CallObserver, AttemptObserver {
  readonly #tracer: () => Tracer;

  /** `tracer` is asked at each span: the plugin's provider exists from `start` to `stop`. */
  constructor(tracer: () => Tracer) {
    this.#tracer = tracer;
  }

  /**
   * The stages: one before `authenticate` that opens the span, and one after each of `stages` that
   * adds an event named after it, so a trace shows how far a call got and when.
   */
  stages(stages: readonly string[]): StageDefinition[] {
    const open: StageDefinition = { name: OPEN_SPAN_STAGE, before: stages[0]!, create: () => step((ctx) => this.#open(ctx)) };
    const marks = stages.map((name): StageDefinition => ({
      name: `otel.${name}`,
      after: name,
      create: () =>
        step((ctx) => {
          ctx.state.get(CALL_SPAN)?.addEvent(name);
        }),
    }));
    return [open, ...marks];
  }

  #open(ctx: RequestContext): void {
    const headers = ctx.meta.headers ?? {};
    const parent = propagator.extract(ROOT_CONTEXT, headers, defaultTextMapGetter);
    const span = this.#tracer().startSpan(
      `${ctx.network.name} ${ctx.call.method}`,
      {
        kind: SpanKind.SERVER,
        attributes: {
          'rpc.system': ctx.transport === 'ipfs' ? 'ipfs' : 'jsonrpc',
          'rpc.method': ctx.call.method,
          'tollgate.call.id': ctx.id,
          'tollgate.network': ctx.network.name,
          'tollgate.transport': ctx.transport,
        },
      },
      parent,
    );
    ctx.state.set(CALL_SPAN, span);
  }

  callFinished(ctx: RequestContext): void {
    const span = ctx.state.get(CALL_SPAN);
    if (span === undefined) return;
    if (ctx.key !== undefined) span.setAttribute('tollgate.key.id', ctx.key.id);
    span.setAttribute('tollgate.attempts', ctx.attempts);
    // Credits as usage counts them: only a debit that stood.
    span.setAttribute('tollgate.credits', usageOf(ctx, 0)?.credits ?? 0);
    if (ctx.servedBy !== undefined) span.setAttribute('tollgate.upstream', ctx.servedBy.name);
    if (ctx.error !== undefined) {
      span.setAttribute('rpc.jsonrpc.error_code', ctx.error.code);
      span.setAttribute('http.response.status_code', ctx.error.httpStatus);
      span.setStatus({ code: SpanStatusCode.ERROR, message: ctx.error.entry.name });
    } else span.setStatus({ code: SpanStatusCode.OK });
    span.end();
  }

  attemptStarted(ctx: RequestContext, upstream: Upstream): AttemptEnd {
    const parent = ctx.state.get(CALL_SPAN);
    const span = this.#tracer().startSpan(
      `upstream ${upstream.name}`,
      {
        kind: SpanKind.CLIENT,
        attributes: { 'tollgate.upstream': upstream.name, 'tollgate.upstream.role': upstream.settings.role, 'tollgate.attempt': ctx.attempts },
      },
      parent === undefined ? ROOT_CONTEXT : trace.setSpan(ROOT_CONTEXT, parent),
    );
    return (failure) => {
      if (failure === undefined) span.setStatus({ code: SpanStatusCode.OK });
      else {
        span.setAttribute('tollgate.failure', failure.kind);
        span.setStatus({ code: SpanStatusCode.ERROR, message: failure.message.slice(0, 200) });
      }
      span.end();
    };
  }
}
