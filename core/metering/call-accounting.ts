import type { Logger } from 'pino';
import type { Clock } from '../util/clock.js';
import type { RequestContext } from '../contracts/request-context.js';
import { usageOf } from '../usage/usage.js';
import type { CallObserver, UsageEvent } from '../contracts/usage.js';
import type { StreamOutcome } from '../contracts/stream-outcome.js';

/**
 * Whether a finished call was answered with a stream: its bytes are known only once the transport
 * relaying it reached the end, so its usage is recorded then (`GatewayRuntime.recordStreamedCall`).
 */
export function answeredWithStream(ctx: RequestContext): boolean {
  return ctx.error === undefined && ctx.reply !== undefined && !(ctx.reply.body instanceof Uint8Array);
}

/**
 * What happens when a call leaves the pipeline: its usage is recorded (one record per call; a call
 * answered with a stream is recorded when its stream ends, see {@link answeredWithStream}) and every
 * observer sees it. A failing observer is logged, never passed on to the call.
 */
export function callFinisher(recordUsage: (event: UsageEvent) => void, observers: readonly CallObserver[], clock: Clock, logger: Logger): (ctx: RequestContext) => void {
  return (ctx) => {
    const event = usageOf(ctx, clock.now());
    if (event !== undefined && !answeredWithStream(ctx)) recordUsage(event);
    for (const observer of observers) {
      try {
        observer.callFinished(ctx);
      } catch (error) {
        logger.error({ err: error }, 'call observer failed');
      }
    }
  };
}

/**
 * Records the usage of a call answered with a stream, once the stream ended: one record for the call,
 * with the bytes relayed and whether the stream failed.
 */
export function streamedCallRecorder(recordUsage: (event: UsageEvent) => void, clock: Clock): (ctx: RequestContext, outcome: StreamOutcome) => void {
  return (ctx, outcome) => {
    const event = usageOf(ctx, clock.now());
    if (event === undefined) return;
    recordUsage({ ...event, bytes: outcome.bytes, failed: outcome.failed });
  };
}
