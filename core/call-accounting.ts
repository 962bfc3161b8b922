import type { Logger } from 'pino';
import type { Clock } from './clock.js';
import type { RequestContext } from './context.js';
import { usageOf, type CallObserver, type UsageRecorder } from './observe.js';

/**
 * What happens when a call leaves the pipeline: its usage is recorded and every observer sees it. A
 * failing recorder or observer is logged, never passed on to the call.
 */
export function callFinisher(usage: UsageRecorder, observers: readonly CallObserver[], clock: Clock, logger: Logger): (ctx: RequestContext) => void {
  return (ctx) => {
    const event = usageOf(ctx, clock.now());
    if (event !== undefined) {
      try {
        const recorded = usage.record(event);
        if (recorded instanceof Promise) recorded.catch((error: unknown) => logger.error({ err: error }, 'usage recording failed'));
      } catch (error) {
        logger.error({ err: error }, 'usage recording failed');
      }
    }
    for (const observer of observers) {
      try {
        observer.callFinished(ctx);
      } catch (error) {
        logger.error({ err: error }, 'call observer failed');
      }
    }
  };
}
